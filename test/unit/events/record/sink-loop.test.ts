import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { SinkError } from '../../../../src/core/errors.ts';
import { drain, kubeEvent } from './helpers.ts';
import { settled, setup, T0, transport } from './sink-fixture.ts';

describe('recordToSink: create, patch and 404 fallback', () => {
  it('POSTs a first occurrence and PATCHes a repeat with the exact patch', async () => {
    const t = setup();
    await t.loop.recordToSink(kubeEvent({}, T0));
    t.clock.advance(1000);
    await t.loop.recordToSink(kubeEvent({}, T0 + 1000));
    assert.equal(t.sink.verbs(), 'create,patch');
    assert.deepEqual(t.sink.calls[1]?.patch, {
      count: 2,
      lastTimestamp: T0 + 1000,
      message: 'Killed process 1234 (foo)',
    });
    assert.equal(t.sink.calls[1]?.event.resourceVersion, '1', 'patches the object the server returned');
    assert.equal(await t.metric('written_total', { verb: 'create' }), 1);
    assert.equal(await t.metric('written_total', { verb: 'patch' }), 1);
  });

  it('falls back to a create with the same name, current count and no resourceVersion on a 404 PATCH', async () => {
    const t = setup();
    t.sink.respond = (call) =>
      call.verb === 'patch' ? new SinkError('events "x" not found', 404, 'NotFound') : t.sink.echo(call);
    await t.loop.recordToSink(kubeEvent({}, T0));
    await t.loop.recordToSink(kubeEvent({}, T0 + 1000));
    assert.equal(t.sink.verbs(), 'create,patch,create');
    const recreated = t.sink.calls[2]!.event;
    assert.equal(recreated.name, t.sink.calls[0]!.event.name);
    assert.equal(recreated.count, 2);
    assert.equal('resourceVersion' in recreated, false);
    assert.equal(await t.metric('given_up_total'), 0);
  });
});

describe('recordToSink: retries', () => {
  it('retries transport errors: first sleep rand*10 s, then 10 s, past 12 attempts (outage hold)', async () => {
    const t = setup(() => transport());
    const done = settled(t.loop.recordToSink(kubeEvent()));
    await drain();
    assert.equal(t.sink.calls.length, 1);
    await t.advance(4999);
    assert.equal(t.sink.calls.length, 1);
    await t.advance(1);
    assert.equal(t.sink.calls.length, 2);
    await t.advance(9999);
    assert.equal(t.sink.calls.length, 2);
    await t.advance(1);
    assert.equal(t.sink.calls.length, 3);
    for (let i = 0; i < 9; i++) await t.advance(10_000);
    assert.equal(t.sink.calls.length, 12);
    await t.advance(10_000);
    assert.equal(t.sink.calls.length, 13, 'unreachable: the 12 tries are not used up within the hold');
    assert.equal(done.done, false);
    assert.equal(await t.metric('retries_total'), 12);
    assert.equal(await t.metric('given_up_total'), 0);
    await t.advance(10_000);
    assert.equal(t.records.at(-1)?.level, 20, 'past 12 tries the failures are logged at debug');
  });

  it('with outageHoldMs 0, gives up a transport failure after 12 attempts (client-go)', async () => {
    const t = setup(() => transport(), { outageHoldMs: 0 });
    const done = settled(t.loop.recordToSink(kubeEvent()));
    await drain();
    await t.advance(5000);
    for (let i = 0; i < 10; i++) await t.advance(10_000);
    assert.equal(t.sink.calls.length, 12);
    assert.equal(done.done, true);
    await t.advance(600_000);
    assert.equal(t.sink.calls.length, 12);
    assert.equal(await t.metric('retries_total'), 11);
    assert.equal(await t.metric('given_up_total', { reason: 'retries_exhausted' }), 1);
    assert.ok(t.records.some((r) => /retry limit exceeded/.test(r.msg)));
    assert.equal(t.clock.pendingTimers(), 0);
  });

  it('resends identical bytes on every attempt', async () => {
    let failures = 2;
    const t = setup((call) => (call.verb === 'patch' && failures-- > 0 ? transport() : t.sink.echo(call)));
    await t.loop.recordToSink(kubeEvent({}, T0));
    const p = t.loop.recordToSink(kubeEvent({}, T0 + 1));
    await drain();
    await t.advance(5000);
    await t.advance(10_000);
    await p;
    assert.equal(t.sink.verbs(), 'create,patch,patch,patch');
    assert.deepEqual(t.sink.calls[2], t.sink.calls[1]);
    assert.deepEqual(t.sink.calls[3], t.sink.calls[1]);
  });

  for (const r of [0, 0.25, 0.999]) {
    it(`jitters the first sleep within [0, 10 s): random ${r} -> ${10_000 * r} ms`, async () => {
      let fail = true;
      const t = setup(
        (call) => {
          if (!fail) return t.sink.echo(call);
          fail = false;
          return transport();
        },
        { random: () => r },
      );
      const done = settled(t.loop.recordToSink(kubeEvent()));
      await drain();
      const delay = 10_000 * r;
      if (delay >= 1) {
        await t.advance(delay - 1);
        assert.equal(t.sink.calls.length, 1);
        await t.advance(1);
      } else {
        await t.advance(delay);
      }
      assert.equal(t.sink.calls.length, 2);
      assert.equal(done.done, true);
    });
  }

  it('retries any non-SinkError failure as a transport error', async () => {
    let fail = true;
    const t = setup((call) => {
      if (!fail) return t.sink.echo(call);
      fail = false;
      return new TypeError('fetch failed');
    });
    void t.loop.recordToSink(kubeEvent());
    await drain();
    await t.advance(5000);
    assert.equal(t.sink.calls.length, 2);
    assert.equal(await t.metric('retries_total'), 1);
  });

  it('holds later events behind a retrying one (head-of-line)', async () => {
    let fail = true;
    const t = setup((call) => {
      if (!fail) return t.sink.echo(call);
      fail = false;
      return transport();
    });
    t.broadcaster.actionOrDrop(kubeEvent({ message: 'first' }));
    t.broadcaster.actionOrDrop(kubeEvent({ message: 'second' }));
    await drain();
    assert.deepEqual(
      t.sink.calls.map((c) => c.event.message),
      ['first'],
    );
    await t.advance(5000);
    assert.deepEqual(
      t.sink.calls.map((c) => c.event.message),
      ['first', 'first', 'second'],
    );
  });
});

describe('recordToSink: rejections and Retry-After', () => {
  for (const [code, reason] of [
    [422, 'Invalid'],
    [403, 'Forbidden'],
    [500, 'InternalError'],
    [429, 'TooManyRequests'],
  ] as const) {
    it(`abandons ${code} ${reason} without Retry-After after one attempt`, async () => {
      const t = setup(() => new SinkError('rejected', code, reason));
      await t.loop.recordToSink(kubeEvent());
      assert.equal(t.sink.calls.length, 1);
      assert.equal(t.clock.pendingTimers(), 0);
      assert.equal(await t.metric('given_up_total', { reason: 'rejected' }), 1);
      assert.equal(await t.metric('retries_total'), 0);
      assert.ok(t.records.some((r) => r.level === 50 && /will not retry/.test(r.msg)));
    });
  }

  it('logs AlreadyExists on a first attempt quietly (debug), still abandoning', async () => {
    const t = setup(() => new SinkError('exists', 409, 'AlreadyExists'));
    await t.loop.recordToSink(kubeEvent());
    const rejection = t.records.find((r) => /will not retry/.test(r.msg));
    assert.equal(rejection?.level, 20);
    assert.equal(await t.metric('given_up_total', { reason: 'rejected' }), 1);
  });

  for (const code of [429, 503]) {
    it(`honours Retry-After on ${code} instead of the jittered sleep, stretched by up to 25 %`, async () => {
      let fail = true;
      const t = setup(
        (call) => {
          if (!fail) return t.sink.echo(call);
          fail = false;
          return Object.assign(new SinkError('slow down', code), { retryAfterMs: 2000 });
        },
        { random: () => 0.9 },
      );
      const done = settled(t.loop.recordToSink(kubeEvent()));
      await drain();
      await t.advance(2449);
      assert.equal(t.sink.calls.length, 1, 'not before 2 s x (1 + 0.25 x random 0.9)');
      await t.advance(1);
      assert.equal(t.sink.calls.length, 2);
      assert.equal(done.done, true);
      assert.equal(await t.metric('retries_total'), 1);
      assert.equal(await t.metric('given_up_total'), 0);
    });
  }

  it('caps a long Retry-After at 60 s (then jittered: 67.5 s at random 0.5)', async () => {
    const t = setup(() => Object.assign(new SinkError('slow down', 429), { retryAfterMs: 3_600_000 }));
    void t.loop.recordToSink(kubeEvent());
    await drain();
    await t.advance(67_499);
    assert.equal(t.sink.calls.length, 1);
    await t.advance(1);
    assert.equal(t.sink.calls.length, 2);
  });

  it('ignores Retry-After on a 4xx other than 429', async () => {
    const t = setup(() => Object.assign(new SinkError('bad', 400), { retryAfterMs: 1000 }));
    await t.loop.recordToSink(kubeEvent());
    assert.equal(t.sink.calls.length, 1);
    assert.equal(await t.metric('given_up_total', { reason: 'rejected' }), 1);
  });
});
