/**
 * A kube-apiserver that has just restarted answers 403 until its RBAC authorizer has synced (issue 41's
 * fleet outage: 61 of 1,000 events refused so). A 403 within FORBIDDEN_AFTER_OUTAGE_MS of the sink's last
 * unanswered attempt is retried inside the 12 tries; any other 403 stays client-go's rejection.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { SinkError } from '../../../../src/core/errors.ts';
import {
  FORBIDDEN_AFTER_OUTAGE_MS,
  MAX_TRIES_PER_EVENT,
} from '../../../../src/events/record/retry-policy.ts';
import type { KubeEvent } from '../../../../src/events/record/types.ts';
import { drain, kubeEvent, type SinkCall } from './helpers.ts';
import { setup, T0, transport } from './sink-fixture.ts';

const forbidden = () => new SinkError('events is forbidden: User cannot create resource', 403, 'Forbidden');

/** Answers from a script, one per call; the last one repeats. */
function scripted(...answers: ('down' | 'forbidden' | 'ok')[]) {
  let i = 0;
  const t = setup((call: SinkCall): KubeEvent | Error => {
    const answer = answers[Math.min(i++, answers.length - 1)];
    if (answer === 'down') return transport();
    return answer === 'forbidden' ? forbidden() : t.sink.echo(call);
  });
  return t;
}

describe('a 403 right after an outage', () => {
  it('is retried and the event written once the authorizer answers', async () => {
    const t = scripted('down', 'down', 'forbidden', 'forbidden', 'ok');
    void t.loop.recordToSink(kubeEvent({}, T0));
    await drain();
    for (let i = 0; i < 5; i++) await t.advance(10_000);
    assert.equal(t.sink.verbs(), 'create,create,create,create,create');
    assert.equal(await t.metric('written_total', { verb: 'create' }), 1);
    assert.equal(await t.metric('given_up_total'), 0);
    assert.equal(await t.metric('retries_total'), 4);
    assert.ok(t.records.some((r) => r.level === 40 && /refused right after an outage/.test(r.msg)));
  });

  it('covers an event queued behind the held one, refused on its first try after the return', async () => {
    const t = scripted('down', 'ok', 'forbidden', 'ok');
    t.broadcaster.actionOrDrop(kubeEvent({ reason: 'A' }, T0));
    t.broadcaster.actionOrDrop(kubeEvent({ reason: 'B' }, T0));
    await drain();
    for (let i = 0; i < 4; i++) await t.advance(10_000);
    assert.deepEqual(
      t.sink.calls.map((c) => c.event.reason),
      ['A', 'A', 'B', 'B'],
    );
    assert.equal(await t.metric('written_total', { verb: 'create' }), 2);
    assert.equal(await t.metric('given_up_total'), 0);
  });

  it('is given up when the refusal outlasts the window, within the 12 tries', async () => {
    const t = scripted('down', 'forbidden');
    void t.loop.recordToSink(kubeEvent({}, T0));
    await drain();
    for (let i = 0; i < 20; i++) await t.advance(10_000);
    // The unanswered try at T0, refusals retried every 10 s while within the window, then one rejection.
    // The down try at T0, then 403s at 5, 15, ... 55 s (each within 60 s of it), rejected at 65 s.
    assert.equal(t.sink.calls.length, 8);
    assert.ok(t.sink.calls.length < MAX_TRIES_PER_EVENT, 'the window ends it before the 12 tries');
    assert.equal(await t.metric('given_up_total', { reason: 'rejected' }), 1);
    assert.equal(await t.metric('written_total'), 0);
    assert.equal(t.clock.pendingTimers(), 0);
  });

  it('is retried at exactly the window edge, and not a millisecond past it', async () => {
    for (const [after, retried] of [
      [FORBIDDEN_AFTER_OUTAGE_MS, true],
      [FORBIDDEN_AFTER_OUTAGE_MS + 1, false],
    ] as const) {
      const t = scripted('down', 'ok', 'forbidden', 'ok');
      void t.loop.recordToSink(kubeEvent({ reason: 'A' }, T0));
      await drain();
      await t.advance(5_000);
      await t.advance(after - 5_000);
      void t.loop.recordToSink(kubeEvent({ reason: 'B' }, t.clock.now()));
      await drain();
      await t.advance(10_000);
      assert.equal(await t.metric('written_total', { verb: 'create' }), retried ? 2 : 1, `at ${after} ms`);
      assert.equal(await t.metric('given_up_total', { reason: 'rejected' }), retried ? 0 : 1);
    }
  });

  it('a 403 is a definite answer: an AlreadyExists after it on a first-tried event is a rejection', async () => {
    // A's try goes unanswered (the outage); B's first try is refused 403 in the window, then 409.
    const answers = [transport(), undefined, forbidden(), new SinkError('exists', 409, 'AlreadyExists')];
    let i = 0;
    const t = setup((call): KubeEvent | Error => answers[i++] ?? t.sink.echo(call));
    t.broadcaster.actionOrDrop(kubeEvent({ reason: 'A' }, T0));
    t.broadcaster.actionOrDrop(kubeEvent({ reason: 'B' }, T0));
    await drain();
    for (let k = 0; k < 3; k++) await t.advance(10_000);
    assert.deepEqual(
      t.sink.calls.map((c) => c.event.reason),
      ['A', 'A', 'B', 'B'],
    );
    assert.equal(await t.metric('written_total', { verb: 'create' }), 1, 'A only');
    assert.equal(await t.metric('given_up_total', { reason: 'rejected' }), 1, "B's 409 is not its own");
  });

  it('control: with the outage hold off (client-go mode) a 403 is rejected at once', async () => {
    let i = 0;
    const t = setup(() => (i++ === 0 ? transport() : forbidden()), { outageHoldMs: 0 });
    void t.loop.recordToSink(kubeEvent({}, T0));
    await drain();
    await t.advance(5_000);
    assert.equal(t.sink.calls.length, 2);
    assert.equal(await t.metric('given_up_total', { reason: 'rejected' }), 1);
  });

  it('control: without an outage a 403 is rejected at once (client-go)', async () => {
    const t = scripted('forbidden');
    await t.loop.recordToSink(kubeEvent({}, T0));
    assert.equal(t.sink.calls.length, 1);
    assert.equal(await t.metric('given_up_total', { reason: 'rejected' }), 1);
  });

  it('control: past the window after the last outage a 403 is rejected at once', async () => {
    const t = scripted('down', 'ok', 'forbidden');
    void t.loop.recordToSink(kubeEvent({ reason: 'A' }, T0));
    await drain();
    await t.advance(5_000);
    assert.equal(await t.metric('written_total', { verb: 'create' }), 1);
    await t.advance(FORBIDDEN_AFTER_OUTAGE_MS);
    await t.loop.recordToSink(kubeEvent({ reason: 'B' }, t.clock.now()));
    assert.equal(t.sink.verbs(), 'create,create,create');
    assert.equal(await t.metric('given_up_total', { reason: 'rejected' }), 1);
  });
});
