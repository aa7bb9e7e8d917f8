/**
 * The API sink through an outage (issue 41): transport failures do not use up the 12 tries while the
 * event is younger than the hold (1 h, the API server's --event-ttl), so the events of a 2 minute outage
 * are written after it; the queue behind the held event stays at the watcher's 1,000; after the return
 * the spam filter (25 per source, object and type, then 1 per 5 min) bounds one node's requests.
 * Controls: past the hold the event is given up as `expired`; HTTP answers keep client-go's rules.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { Registry } from 'prom-client';
import { FakeClock } from '../../../../src/core/clock.ts';
import { SinkError } from '../../../../src/core/errors.ts';
import { Broadcaster, DEFAULT_QUEUE_LENGTH } from '../../../../src/events/record/broadcaster.ts';
import { EventRecorder, nodeRef } from '../../../../src/events/record/recorder.ts';
import { SinkLoop } from '../../../../src/events/record/sink-loop.ts';
import { DEFAULT_SPAM_BURST } from '../../../../src/events/record/spam-filter.ts';
import type { KubeEvent } from '../../../../src/events/record/types.ts';
import { captureLogger, drain, FakeSink, kubeEvent, metricValue } from './helpers.ts';
import { setup, T0, transport } from './sink-fixture.ts';

const SOURCE = 'kernel-monitor';
const OUTAGE_MS = 120_000;

/** One node's recorder, broadcaster and API sink loop, with the watcher kept so its queue can be read. */
function node() {
  const clock = new FakeClock(T0);
  const registry = new Registry();
  const { logger } = captureLogger();
  const requests: { at: number; ok: boolean }[] = [];
  let down = true;
  const sink: FakeSink = new FakeSink((call) => {
    requests.push({ at: clock.now(), ok: !down });
    return down ? new SinkError('connect ECONNREFUSED') : sink.echo(call);
  });
  const broadcaster = new Broadcaster<KubeEvent>({ registry, logger, source: SOURCE, clock });
  const loop = new SinkLoop({ source: SOURCE, sink, clock, registry, logger, random: () => 0.5 });
  const watcher = broadcaster.watch('api', (event) => loop.recordToSink(event));
  loop.attach(watcher);
  const ref = nodeRef('node-1', 'uid-1');
  let n = 0n;
  const recorder = new EventRecorder({
    ...{ component: SOURCE, host: ref.name, involvedObject: ref, clock, broadcaster, logger, registry },
    nanos: () => ++n,
  });
  const metric = (name: string, labels: Record<string, string> = {}) =>
    metricValue(registry, `npd_events_${name}`, { source: SOURCE, ...labels });
  /** Advances 1 s at a time; returns the longest the watcher's queue was meanwhile. */
  const step = async (ms: number) => {
    let longest = 0;
    for (let left = ms; left > 0; left -= 1000) {
      clock.advance(Math.min(1000, left));
      await drain(3);
      longest = Math.max(longest, watcher.pending());
    }
    return longest;
  };
  const recover = () => {
    down = false;
    return clock.now();
  };
  const within = (from: number, ms: number) =>
    requests.filter((r) => r.at >= from && r.at < from + ms).length;
  return { clock, sink, watcher, recorder, requests, metric, step, recover, within };
}

describe('API sink through a 2 minute outage', () => {
  it('writes every event recorded during it, gives none up, 24 requests in the first 10 s back', async () => {
    const t = node();
    for (let s = 0; s < OUTAGE_MS / 1000; s++) {
      if (s % 10 === 0) t.recorder.event('Warning', 'TaskHung', 'task docker:4321 blocked for 120 seconds.');
      if (s % 10 === 5) t.recorder.event('Warning', `Probe${s}`, 'probe failed');
      await t.step(1000);
    }
    assert.equal(t.requests.length, 13, 'only the head was tried: at 0 s, 5 s, then every 10 s');
    assert.equal(new Set(t.sink.calls.map((c) => c.event.name)).size, 1);
    assert.equal(await t.metric('given_up_total'), 0, 'held, not given up after 12 tries');
    assert.equal(t.watcher.pending(), 23);
    const back = t.recover();
    await t.step(10 * 60_000);
    assert.equal(t.within(back, 10_000), 24, 'the head at its next 10 s tick, then the queue at once');
    assert.ok(t.within(back, 10_000) <= DEFAULT_SPAM_BURST);
    assert.equal(t.requests.length, 13 + 24, 'nothing after the drain');
    assert.equal(await t.metric('recorded_total'), 24);
    assert.equal(await t.metric('written_total', { verb: 'create' }), 13, 'the TaskHung and 12 probes');
    assert.equal(await t.metric('written_total', { verb: 'patch' }), 11, 'TaskHung repeats, counts 2-12');
    assert.equal(t.sink.calls.at(-1)?.verb, 'create');
    assert.equal(Math.max(...t.sink.calls.map((c) => c.patch?.count ?? 0)), 12);
    assert.equal(await t.metric('retries_total'), 13);
    assert.equal(await t.metric('given_up_total'), 0);
    assert.equal(await t.metric('spam_filtered_total'), 0);
  });

  it('holds a flood at the queue of 1,000 (drops counted); 25 requests in the first 10 s back', async () => {
    const t = node();
    let longest = 0;
    let offered = 0;
    for (let s = 0; s < OUTAGE_MS / 1000; s += 8) {
      for (let i = 0; i < 100; i++) t.recorder.event('Warning', `Flood${offered++}`, 'm');
      longest = Math.max(longest, await t.step(8000));
    }
    assert.equal(offered, 1500);
    assert.equal(longest, DEFAULT_QUEUE_LENGTH, 'the queue behind the held head never grew past 1,000');
    assert.equal(
      await t.metric('dropped_total', { point: 'watcher' }),
      499,
      '1,500 - the head - 1,000 queued',
    );
    assert.equal(await t.metric('dropped_total', { point: 'incoming' }), 0);
    assert.equal(await t.metric('given_up_total'), 0);
    const back = t.recover();
    await t.step(10 * 60_000);
    assert.equal(t.within(back, 10_000), DEFAULT_SPAM_BURST, 'the head plus 24 tokens left in its bucket');
    assert.equal(await t.metric('written_total'), 25, 'no token refilled: the queue drained in one go');
    assert.equal(await t.metric('spam_filtered_total'), 976);
    assert.equal(await t.metric('given_up_total'), 0);
    assert.equal(
      await t.metric('recorded_total'),
      25 + 976 + 499,
      'every event written, filtered or dropped',
    );
  });
});

describe('API sink outage hold: controls', () => {
  it('gives the head up as expired at its first failure past 1 h; the next, younger, is held', async () => {
    const t = setup(() => transport());
    t.broadcaster.actionOrDrop(kubeEvent({ reason: 'Old' }, T0));
    t.broadcaster.actionOrDrop(kubeEvent({ reason: 'Young' }, T0 + 1_800_000));
    await drain();
    await t.advance(5000);
    for (let i = 0; i < 359; i++) await t.advance(10_000);
    assert.equal(t.sink.calls.length, 361, 'at 0 s, 5 s, then every 10 s to 3,595 s');
    assert.equal(await t.metric('given_up_total'), 0);
    await t.advance(10_000);
    assert.equal(await t.metric('given_up_total', { reason: 'expired' }), 1, 'at 3,605 s, age past 1 h');
    assert.equal(await t.metric('given_up_total'), 1);
    assert.ok(t.records.some((r) => r.level === 50 && /outlived its TTL/.test(r.msg)));
    await t.advance(9999);
    assert.equal(t.sink.calls.length, 362, 'the next waits out the 10 s sleep');
    await t.advance(1);
    assert.equal(t.sink.calls.at(-1)?.event.reason, 'Young');
    for (let i = 0; i < 20; i++) await t.advance(10_000);
    assert.equal(t.sink.calls.length, 383, 'Young, 30 min old: 3,615 s, its jittered 5 s, then every 10 s');
    assert.equal(await t.metric('given_up_total'), 1);
  });

  // A 403 is the exception: a restarted API server refuses until its authorizer syncs
  // (forbidden-after-outage.test.ts).
  for (const [code, reason] of [
    [422, 'Invalid'],
    [404, 'NotFound'],
  ] as const) {
    it(`still gives up a ${code} at once, also after transport failures`, async () => {
      let failures = 3;
      const t = setup(() => (failures-- > 0 ? transport() : new SinkError('no', code, reason)));
      void t.loop.recordToSink(kubeEvent());
      await drain();
      await t.advance(5000);
      await t.advance(10_000);
      await t.advance(10_000);
      assert.equal(t.sink.calls.length, 4);
      assert.equal(await t.metric('given_up_total', { reason: 'rejected' }), 1);
      await t.advance(600_000);
      assert.equal(t.sink.calls.length, 4);
      assert.equal(t.clock.pendingTimers(), 0);
    });
  }

  it('charges 429 Retry-After to the 12 tries, and not the transport failures before them', async () => {
    let failures = 20;
    const t = setup(() =>
      failures-- > 0 ? transport() : Object.assign(new SinkError('slow down', 429), { retryAfterMs: 1000 }),
    );
    void t.loop.recordToSink(kubeEvent());
    await drain();
    for (let s = 0; s < 600; s++) await t.advance(1000);
    assert.equal(t.sink.calls.length, 20 + 12, '20 unreachable, then 12 answered 429');
    assert.equal(await t.metric('given_up_total', { reason: 'retries_exhausted' }), 1);
    assert.equal(await t.metric('given_up_total'), 1);
    assert.equal(await t.metric('retries_total'), 31);
  });
});
