/**
 * The event side of the herd after an outage (issue 41 item 4): 1,000 agents' API sink loops on one
 * fake clock, each with its own seeded random, each recording the correlated failure's TaskHung event
 * every 10 s while the API server is away for 2 minutes. Counted: event writes per 1 s window after
 * the return, and that every event recorded is written, spam-filtered, given up or dropped. The outage
 * is within the 1 h hold, so each agent's first TaskHung is held, not given up, and every occurrence is
 * written after the return: its create, then 11 PATCHes with counts 2-12 (12 is under the spam burst of 25).
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { Registry } from 'prom-client';
import { FakeClock } from '../../../../src/core/clock.ts';
import { SinkError } from '../../../../src/core/errors.ts';
import { Broadcaster } from '../../../../src/events/record/broadcaster.ts';
import { EventRecorder, nodeRef } from '../../../../src/events/record/recorder.ts';
import { startRecordingToSink } from '../../../../src/events/record/sink-loop.ts';
import type { KubeEvent } from '../../../../src/events/record/types.ts';
import { captureLogger, drain, FakeSink } from './helpers.ts';

const AGENTS = 1000;
const T0 = Date.UTC(2026, 0, 1);
const SOURCE = 'kernel-monitor';

function seeded(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = Math.imul(a ^ (a >>> 15), a | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

function busiestSecond(times: number[]): number {
  const sorted = [...times].sort((a, b) => a - b);
  let peak = 0;
  for (let lo = 0, hi = 0; hi < sorted.length; hi++) {
    while ((sorted[hi] ?? 0) - (sorted[lo] ?? 0) >= 1000) lo++;
    peak = Math.max(peak, hi - lo + 1);
  }
  return peak;
}

async function total(registry: Registry, name: string): Promise<number> {
  const metric = registry.getSingleMetric(name);
  if (!metric) return 0;
  return (await metric.get()).values.reduce((sum, v) => sum + v.value, 0);
}

describe('1,000 event sink loops through a 2 minute outage', () => {
  it('first retries spread over 10 s; each drains its backlog after; every event accounted for', async () => {
    const clock = new FakeClock(T0);
    const registry = new Registry();
    const { logger } = captureLogger();
    let down = true;
    const writes: number[] = [];
    const recorders: EventRecorder[] = [];
    for (let i = 0; i < AGENTS; i++) {
      const sink: FakeSink = new FakeSink((call) => {
        if (down) return new SinkError('connect ECONNREFUSED');
        writes.push(clock.now());
        return sink.echo(call);
      });
      const broadcaster = new Broadcaster<KubeEvent>({ registry, logger, source: SOURCE, clock });
      startRecordingToSink(broadcaster, {
        source: SOURCE,
        sink,
        clock,
        registry,
        logger,
        random: seeded(i + 1),
      });
      const node = nodeRef(`node-${i}`, `uid-${i}`);
      const nanos = (() => {
        let n = 0n;
        return () => ++n;
      })();
      recorders.push(
        new EventRecorder({
          component: SOURCE,
          host: node.name,
          involvedObject: node,
          clock,
          broadcaster,
          nanos,
          logger,
          registry,
        }),
      );
    }
    for (let s = 0; s < 120; s++) {
      if (s % 10 === 0)
        for (const r of recorders)
          r.event('Warning', 'TaskHung', 'task docker:4321 blocked for more than 120 seconds.');
      clock.advance(1000);
      await drain(3);
    }
    down = false;
    const back = clock.now();
    for (let s = 0; s < 120; s++) {
      clock.advance(1000);
      await drain(3);
    }
    const after = writes.filter((t) => t >= back);
    const firstByAgent = after.length;
    const peak = busiestSecond(after);
    const lastWrite = Math.max(...after) - back;
    const recorded = await total(registry, 'npd_events_recorded_total');
    const written = await total(registry, 'npd_events_written_total');
    const givenUp = await total(registry, 'npd_events_given_up_total');
    const filtered = await total(registry, 'npd_events_spam_filtered_total');
    const dropped = await total(registry, 'npd_events_dropped_total');
    console.log(
      `events: ${firstByAgent} writes after the return, busiest second ${peak}, last ${lastWrite} ms after; recorded ${recorded}, written ${written}, given up ${givenUp}, filtered ${filtered}, dropped ${dropped}`,
    );
    assert.equal(recorded, written + givenUp + filtered + dropped, 'every event accounted for');
    assert.equal(recorded, AGENTS * 12);
    assert.equal(givenUp, 0, 'held through the outage, not given up after 12 tries');
    assert.equal(written, recorded, 'every TaskHung of the outage written after it');
    assert.equal(after.length, AGENTS * 12, 'all of them after the return');
    assert.ok(lastWrite < 12_500, 'every loop retried within one 10 s sleep of the return, plus its jitter');
    assert.ok(peak < after.length, 'the writes did not all land in one second');
  });
});
