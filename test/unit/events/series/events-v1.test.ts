import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { Registry } from 'prom-client';
import { FakeClock } from '../../../../src/core/clock.ts';
import { SinkError } from '../../../../src/core/errors.ts';
import { silentLogger } from '../../../../src/core/logger.ts';
import {
  type EventsV1Event,
  type EventsV1Init,
  type EventsV1SeriesPatch,
  type EventsV1Sink,
  isomorphicKey,
  makeEventsV1Event,
} from '../../../../src/events/series/events.ts';
import { EventsV1Recorder, type EventsV1RecorderOptions } from '../../../../src/events/series/recorder.ts';
import { drain, metricValue, NODE } from '../record/helpers.ts';

const T0 = Date.UTC(2026, 0, 1);
const MIN = 60_000;

interface V1Call {
  readonly verb: 'create' | 'patch';
  readonly name: string;
  readonly event?: EventsV1Event;
  readonly patch?: EventsV1SeriesPatch;
}

class FakeV1Sink implements EventsV1Sink {
  readonly calls: V1Call[] = [];
  fail: ((call: V1Call) => Error | undefined) | undefined;

  async create(event: EventsV1Event): Promise<EventsV1Event> {
    return this.answer({ verb: 'create', name: event.name, event: structuredClone(event) }, event);
  }

  async patch(name: string, _ns: string, patch: EventsV1SeriesPatch): Promise<EventsV1Event> {
    return this.answer({ verb: 'patch', name, patch: structuredClone(patch) }, undefined);
  }

  /** Answers like the server: a create echoes the event, a patch returns the stored object patched. */
  private answer(call: V1Call, event: EventsV1Event | undefined): EventsV1Event {
    this.calls.push(call);
    const err = this.fail?.(call);
    if (err) throw err;
    const stored = event ?? { ...this.created(call.name), series: { ...call.patch!.series } };
    return { ...stored, resourceVersion: String(this.calls.length) };
  }

  private created(name: string): EventsV1Event {
    const created = this.calls.find((c) => c.verb === 'create' && c.name === name)?.event;
    if (!created) throw new SinkError('not found', 404, 'NotFound');
    return created;
  }
}

const INIT: EventsV1Init = {
  regarding: NODE,
  type: 'Warning',
  reason: 'OOMKilling',
  action: 'Killing',
  note: 'Killed process 1',
  reportingController: 'kernel-monitor',
  reportingInstance: 'node-1',
};

function setup(extra: Partial<EventsV1RecorderOptions> = {}) {
  const clock = new FakeClock(T0);
  const registry = new Registry();
  const sink = new FakeV1Sink();
  const recorder = new EventsV1Recorder({
    source: 'kernel-monitor',
    sink,
    clock,
    registry,
    logger: silentLogger(),
    random: () => 0,
    ...extra,
  });
  let seq = 0n;
  const event = (over: Partial<EventsV1Init> = {}) =>
    makeEventsV1Event({ ...INIT, ...over }, clock.now(), BigInt(clock.now()) * 1_000_000n + seq++);
  const record = async (over: Partial<EventsV1Init> = {}) => {
    await recorder.record(event(over));
    await drain(2);
  };
  const advance = async (ms: number, step = MIN) => {
    for (let left = ms; left > 0; left -= step) {
      clock.advance(Math.min(step, left));
      await drain(3);
    }
  };
  return { clock, registry, sink, recorder, record, advance };
}

describe('events/v1 isomorphic key', () => {
  const base = makeEventsV1Event(INIT, T0, 1n);
  it('ignores the note but not type, reason, action or reporting fields', () => {
    assert.equal(isomorphicKey({ ...base, note: 'other' }), isomorphicKey(base));
    for (const over of [
      { type: 'Normal' },
      { reason: 'X' },
      { action: 'X' },
      { reportingInstance: 'X' },
    ] as const) {
      assert.notEqual(isomorphicKey({ ...base, ...over }), isomorphicKey(base));
    }
  });

  it("includes the regarding object's resourceVersion and the related object", () => {
    assert.notEqual(
      isomorphicKey({ ...base, regarding: { ...NODE, resourceVersion: '7' } }),
      isomorphicKey(base),
    );
    assert.notEqual(isomorphicKey({ ...base, related: NODE }), isomorphicKey(base));
  });

  it('builds strict-validation events: eventTime set, no series, default namespace', () => {
    assert.equal(base.eventTime, T0);
    assert.equal(base.series, undefined);
    assert.equal(base.namespace, 'default');
    assert.equal(base.name, 'node-1.1');
  });
});

describe('EventsV1Recorder series', () => {
  it('POSTs the first occurrence, PATCHes a series of 2 on the second, then writes nothing', async () => {
    const t = setup();
    await t.record();
    t.clock.advance(1000);
    await t.record({ note: 'a different note folds in' });
    for (let i = 0; i < 5; i++) {
      t.clock.advance(1000);
      await t.record();
    }
    assert.deepEqual(
      t.sink.calls.map((c) => c.verb),
      ['create', 'patch'],
    );
    assert.equal(t.sink.calls[0]?.event?.series, undefined);
    assert.equal(t.sink.calls[1]?.name, t.sink.calls[0]?.name);
    assert.deepEqual(t.sink.calls[1]?.patch, { series: { count: 2, lastObservedTime: T0 + 1000 } });
    assert.equal(t.recorder.cache.size, 1);
  });

  it('writes the final count once the series has been idle for 6 minutes, then starts a new one', async () => {
    const t = setup();
    t.recorder.start();
    for (let i = 0; i < 4; i++) {
      await t.record();
      t.clock.advance(1000);
    }
    await t.advance(6 * MIN - 4000);
    assert.equal(t.sink.calls.length, 2, 'at 6 min the series is only 5m57s idle');
    await t.advance(6 * MIN);
    assert.deepEqual(t.sink.calls[2]?.patch, { series: { count: 4, lastObservedTime: T0 + 3000 } });
    assert.equal(t.recorder.cache.size, 0);
    await t.record();
    assert.equal(t.sink.calls[3]?.verb, 'create');
    assert.notEqual(t.sink.calls[3]?.name, t.sink.calls[0]?.name);
    t.recorder.stop();
  });

  it('forgets an old singleton without any API call', async () => {
    const t = setup();
    t.recorder.start();
    await t.record();
    await t.advance(12 * MIN);
    assert.equal(t.recorder.cache.size, 0);
    assert.equal(t.sink.calls.length, 1);
    t.recorder.stop();
  });

  it('re-PATCHes a continuing series every 30 minutes (the refresh heartbeat)', async () => {
    const t = setup();
    t.recorder.start();
    for (let m = 0; m < 65; m++) {
      await t.record();
      await t.advance(MIN);
    }
    const patches = t.sink.calls.filter((c) => c.verb === 'patch').map((c) => c.patch?.series.count);
    // 2nd occurrence, then refreshes at 30 and 60 min (30 and 60 occurrences seen by then).
    assert.deepEqual(patches, [2, 30, 60]);
    t.recorder.stop();
  });

  it('with heartbeatActiveSeries, also PATCHes a growing series on every 6-minute pass', async () => {
    const t = setup({ heartbeatActiveSeries: true });
    t.recorder.start();
    for (let m = 0; m < 20; m++) {
      await t.record();
      await t.advance(MIN);
    }
    const patches = t.sink.calls.filter((c) => c.verb === 'patch').map((c) => c.patch?.series);
    assert.deepEqual(patches, [
      { count: 2, lastObservedTime: T0 + MIN },
      { count: 6, lastObservedTime: T0 + 5 * MIN },
      { count: 12, lastObservedTime: T0 + 11 * MIN },
      { count: 18, lastObservedTime: T0 + 17 * MIN },
    ]);
    t.recorder.stop();
  });

  it('falls back to a create when the series PATCH gets a 404', async () => {
    const t = setup();
    t.sink.fail = (c) => (c.verb === 'patch' ? new SinkError('gone', 404, 'NotFound') : undefined);
    await t.record();
    await t.record();
    assert.deepEqual(
      t.sink.calls.map((c) => c.verb),
      ['create', 'patch', 'create'],
    );
    assert.deepEqual(t.sink.calls[2]?.event?.series, { count: 2, lastObservedTime: T0 });
  });

  it('retries AlreadyExists on a series create after a 10-12.5 s jitter', async () => {
    const t = setup({ random: () => 1 });
    let conflicts = 1;
    t.sink.fail = (c) => {
      if (c.verb === 'patch') return new SinkError('gone', 404, 'NotFound');
      if (c.event?.series && conflicts-- > 0) return new SinkError('exists', 409, 'AlreadyExists');
      return undefined;
    };
    await t.record();
    void t.recorder.record(makeEventsV1Event(INIT, T0, 2n));
    await drain();
    assert.equal(t.sink.calls.length, 3);
    await t.advance(12_499, 12_499);
    assert.equal(t.sink.calls.length, 3);
    await t.advance(1, 1);
    assert.deepEqual(
      t.sink.calls.map((c) => c.verb),
      ['create', 'patch', 'create', 'patch', 'create'],
    );
    assert.equal(await metricValue(t.registry, 'npd_events_v1_retries_total'), 1);
  });

  it('abandons other rejections without retrying', async () => {
    const t = setup();
    t.sink.fail = () => new SinkError('invalid', 422, 'Invalid');
    await t.record();
    assert.equal(t.sink.calls.length, 1);
    assert.equal(t.clock.pendingTimers(), 0);
    assert.equal(await metricValue(t.registry, 'npd_events_v1_given_up_total', { reason: 'rejected' }), 1);
  });
});
