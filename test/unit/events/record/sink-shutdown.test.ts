import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { KubeEvent } from '../../../../src/events/record/types.ts';
import { drain, kubeEvent } from './helpers.ts';
import { settled, setup, T0, transport } from './sink-fixture.ts';

describe('recordToSink: worked example A through the sink', () => {
  it('POST, 24 PATCHes, silence, then one PATCH carrying the skipped count at 300 s', async () => {
    const t = setup();
    for (let i = 0; i < 600; i++) {
      t.broadcaster.actionOrDrop(kubeEvent({}, t.clock.now()));
      await drain(3);
      t.clock.advance(1000);
    }
    await drain();
    assert.equal(t.sink.verbs(), ['create', ...Array(25).fill('patch')].join(','));
    assert.deepEqual(
      t.sink.calls.slice(1, 25).map((c) => c.patch?.count),
      Array.from({ length: 24 }, (_, i) => i + 2),
    );
    assert.deepEqual(t.sink.calls[25]?.patch, {
      count: 301,
      lastTimestamp: T0 + 300_000,
      message: 'Killed process 1234 (foo)',
    });
    assert.equal(await t.metric('spam_filtered_total'), 574);
    assert.equal(await t.metric('written_total', { verb: 'patch' }), 25);
  });

  it('counts aggregated events', async () => {
    const t = setup();
    for (let n = 1; n <= 11; n++) t.broadcaster.actionOrDrop(kubeEvent({ message: `pid ${n}` }));
    await drain();
    assert.equal(await t.metric('aggregated_total'), 2);
    assert.equal(t.sink.calls[9]?.event.message, '(combined from similar events): pid 10');
    assert.equal(t.sink.calls[10]?.verb, 'patch');
  });
});

describe('SinkLoop.flush', () => {
  it('tries each queued event once, abandoning the retry sleep in progress', async () => {
    const t = setup(() => transport());
    for (let n = 1; n <= 5; n++) t.broadcaster.actionOrDrop(kubeEvent({ message: `m${n}` }));
    await drain();
    assert.equal(t.sink.calls.length, 1, 'm1 failed and is sleeping');
    const flushed = settled(t.loop.flush(30_000));
    void t.broadcaster.shutdown();
    await drain();
    assert.equal(flushed.done, true, 'no clock advance needed');
    assert.deepEqual(
      t.sink.calls.map((c) => c.event.message),
      ['m1', 'm2', 'm3', 'm4', 'm5'],
    );
    assert.equal(await t.metric('given_up_total', { reason: 'shutdown' }), 5);
    assert.equal(await t.metric('retries_total'), 0);
    assert.equal(await t.metric('dropped_total', { point: 'flush' }), 0);
    assert.equal(t.clock.pendingTimers(), 0);
  });

  it('writes queued events that succeed, once each', async () => {
    const t = setup();
    for (let n = 1; n <= 3; n++) t.broadcaster.actionOrDrop(kubeEvent({ message: `m${n}` }));
    await Promise.all([t.loop.flush(1000), t.broadcaster.shutdown()]);
    await drain();
    assert.equal(t.sink.verbs(), 'create,create,create');
  });

  it('is bounded by the grace period; events never tried are counted as dropped', async () => {
    const t = setup(() => new Promise<KubeEvent>(() => {}));
    for (let n = 1; n <= 3; n++) t.broadcaster.actionOrDrop(kubeEvent({ message: `m${n}` }));
    await drain();
    const flushed = settled(t.loop.flush(5000));
    void t.broadcaster.shutdown();
    await t.advance(4999);
    assert.equal(flushed.done, false);
    await t.advance(1);
    assert.equal(flushed.done, true);
    assert.equal(t.sink.calls.length, 1);
    assert.equal(await t.metric('dropped_total', { point: 'flush', watcher: 'api' }), 2);
    assert.equal(
      await t.metric('given_up_total', { reason: 'shutdown' }),
      1,
      'the request cut off mid-flight',
    );
  });
});
