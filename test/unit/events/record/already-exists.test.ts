/**
 * A create that timed out had in fact been stored (issue 41, correlated failure: 62 events): its retry
 * gets 409 AlreadyExists. After an attempt without a definite answer that 409 is the event written; on
 * a first attempt it stays client-go's rejection.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { SinkError } from '../../../../src/core/errors.ts';
import type { KubeEvent } from '../../../../src/events/record/types.ts';
import { drain, kubeEvent, type SinkCall } from './helpers.ts';
import { setup, T0, transport } from './sink-fixture.ts';

const exists = () => new SinkError('events "x" already exists', 409, 'AlreadyExists');
const timedOut = () =>
  Object.assign(new SinkError('the server was unable to return a response', 504), {
    retryAfterMs: 1000,
  });

/** Creates answer `first()` once, then 409; patches succeed. */
function storedButUnanswered(first: () => Error) {
  let creates = 0;
  const t = setup((call: SinkCall): KubeEvent | Error => {
    if (call.verb === 'patch') return t.sink.echo(call);
    return creates++ === 0 ? first() : exists();
  });
  return t;
}

describe('AlreadyExists after an unanswered create', () => {
  for (const [what, first, wait] of [
    ['a transport error', transport, 5000],
    ['a 504 with Retry-After', timedOut, 1125],
    ['a 429 with Retry-After', () => Object.assign(new SinkError('slow', 429), { retryAfterMs: 1000 }), 1125],
  ] as const) {
    it(`counts it as written after ${what}, and patches the stored event next time`, async () => {
      const t = storedButUnanswered(first);
      void t.loop.recordToSink(kubeEvent({}, T0));
      await drain();
      await t.advance(wait);
      assert.equal(t.sink.verbs(), 'create,create');
      assert.equal(await t.metric('written_total', { verb: 'create' }), 1);
      assert.equal(await t.metric('given_up_total'), 0, 'not rejected: the event exists');
      assert.ok(
        t.records.some((r) => r.level === 20 && /already exists after an unanswered try/.test(r.msg)),
      );
      assert.ok(!t.records.some((r) => r.level >= 50), 'no error logged');
      await t.loop.recordToSink(kubeEvent({}, T0 + 10_000));
      assert.equal(t.sink.verbs(), 'create,create,patch');
      const repeat = t.sink.calls[2]!;
      assert.equal(repeat.event.name, t.sink.calls[0]!.event.name, 'the correlator knows the stored name');
      assert.equal(repeat.patch?.count, 2);
      assert.equal(await t.metric('written_total', { verb: 'patch' }), 1);
    });
  }

  it('stays a rejection on a first attempt (client-go), logged at debug', async () => {
    const t = setup(() => exists());
    await t.loop.recordToSink(kubeEvent());
    assert.equal(t.sink.calls.length, 1);
    assert.equal(await t.metric('given_up_total', { reason: 'rejected' }), 1);
    assert.equal(await t.metric('written_total'), 0);
    assert.equal(t.records.find((r) => /will not retry/.test(r.msg))?.level, 20);
  });

  it('does not carry over from an earlier event that failed without an answer', async () => {
    let calls = 0;
    const t = setup((call) => (calls++ === 0 ? transport() : calls === 2 ? t.sink.echo(call) : exists()));
    void t.loop.recordToSink(kubeEvent({ reason: 'A' }, T0));
    await drain();
    await t.advance(5000);
    await t.loop.recordToSink(kubeEvent({ reason: 'B' }, T0 + 6000));
    assert.equal(t.sink.verbs(), 'create,create,create');
    assert.equal(await t.metric('written_total', { verb: 'create' }), 1, 'A, on its retry');
    assert.equal(await t.metric('given_up_total', { reason: 'rejected' }), 1, "B's 409 came first try");
  });
});
