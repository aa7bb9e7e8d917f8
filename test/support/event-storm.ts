import { FakeClock } from '../../src/core/clock.ts';
import { EventCorrelator } from '../../src/events/record/correlator.ts';
import { generateEventName, monotonicNanos } from '../../src/events/record/names.ts';
import type { EventType, KubeEvent, ObjectRef } from '../../src/events/record/types.ts';
import {
  FINISH_TIME_MS,
  makeEventsV1Event,
  REFRESH_TIME_MS,
  SeriesCache,
  type SeriesWrite,
} from '../../src/events/series/events.ts';

/**
 * How many API writes one event storm costs under core/v1 correlation versus events/v1 series, assuming
 * every write succeeds. Pure: it runs both models on a private fake clock.
 */

export interface StormEvent {
  /** Milliseconds after the storm starts. */
  readonly atMs: number;
  readonly type: EventType;
  readonly reason: string;
  readonly message: string;
  /** events/v1 only; defaults to the reason. */
  readonly action?: string;
}

export interface StormSubject {
  readonly node: ObjectRef;
  readonly source: string;
  readonly host: string;
}

export interface WriteCounts {
  creates: number;
  patches: number;
  total: number;
}

export interface CoreV1Writes extends WriteCounts {
  spamFiltered: number;
  aggregated: number;
}

export interface StormComparison {
  readonly coreV1: CoreV1Writes;
  readonly eventsV1: WriteCounts;
}

const STORM_START = Date.UTC(2026, 0, 1);

function sorted(storm: readonly StormEvent[]): StormEvent[] {
  return [...storm].sort((a, b) => a.atMs - b.atMs);
}

export function countCoreV1Writes(storm: readonly StormEvent[], subject: StormSubject): CoreV1Writes {
  const clock = new FakeClock(STORM_START);
  const nanos = monotonicNanos(clock);
  const correlator = new EventCorrelator({ clock, nanos });
  const counts: CoreV1Writes = { creates: 0, patches: 0, total: 0, spamFiltered: 0, aggregated: 0 };
  for (const s of sorted(storm)) {
    clock.set(STORM_START + s.atMs);
    const event: KubeEvent = {
      name: generateEventName(subject.node.name, nanos()),
      namespace: subject.node.namespace || 'default',
      involvedObject: subject.node,
      reason: s.reason,
      message: s.message,
      type: s.type,
      source: { component: subject.source, host: subject.host },
      reportingComponent: subject.source,
      reportingInstance: subject.host,
      firstTimestamp: clock.now(),
      lastTimestamp: clock.now(),
      count: 1,
    };
    const result = correlator.correlate(event);
    if (result.aggregated) counts.aggregated++;
    if (result.skip) {
      counts.spamFiltered++;
      continue;
    }
    if (result.event.count > 1) counts.patches++;
    else counts.creates++;
    counts.total++;
    correlator.updateState(result.event);
  }
  return counts;
}

interface Pass {
  readonly at: number;
  readonly run: () => SeriesWrite[];
}

/** Periodic passes start one period after the storm does. */
function firstTickAfter(from: number, period: number): number {
  return Math.max(1, Math.floor(from / period) + 1) * period;
}

/** The due finish (every 6 min) and refresh (every 30 min) passes up to `until`, in time order. */
function* passesUntil(cache: SeriesCache, from: number, until: number, heartbeat: boolean): Generator<Pass> {
  let finishAt = firstTickAfter(from, FINISH_TIME_MS);
  let refreshAt = firstTickAfter(from, REFRESH_TIME_MS);
  for (;;) {
    const next = Math.min(finishAt, refreshAt);
    if (next > until) return;
    // When both fall due together the finish pass goes first; upstream runs them in separate goroutines.
    const pass: Pass =
      finishAt <= refreshAt
        ? { at: finishAt, run: () => cache.finishPass(STORM_START + finishAt, heartbeat) }
        : { at: refreshAt, run: () => cache.refreshPass() };
    yield pass;
    if (pass.at === finishAt) finishAt += FINISH_TIME_MS;
    else refreshAt += REFRESH_TIME_MS;
  }
}

function apply(cache: SeriesCache, writes: readonly SeriesWrite[], counts: WriteCounts): void {
  for (const write of writes) {
    if (write.event.series) counts.patches++;
    else counts.creates++;
    counts.total++;
    cache.written(write, write.event);
  }
}

/** Runs the series model through the storm, then keeps the passes going until every series has finished. */
export function countEventsV1Writes(
  storm: readonly StormEvent[],
  subject: StormSubject,
  heartbeatActiveSeries = false,
): WriteCounts {
  const cache = new SeriesCache();
  const nanos = monotonicNanos(new FakeClock(STORM_START));
  const counts: WriteCounts = { creates: 0, patches: 0, total: 0 };
  let last = -1;
  for (const s of sorted(storm)) {
    for (const pass of passesUntil(cache, last, s.atMs, heartbeatActiveSeries)) {
      apply(cache, pass.run(), counts);
    }
    last = s.atMs;
    const init = {
      regarding: subject.node,
      type: s.type,
      reason: s.reason,
      action: s.action ?? s.reason,
      note: s.message,
      reportingController: subject.source,
      reportingInstance: subject.host,
    };
    const write = cache.observe(makeEventsV1Event(init, STORM_START + s.atMs, nanos()), STORM_START + s.atMs);
    if (write) apply(cache, [write], counts);
  }
  const drainUntil = last + 2 * REFRESH_TIME_MS;
  for (const pass of passesUntil(cache, last, drainUntil, heartbeatActiveSeries)) {
    if (cache.size === 0) break;
    apply(cache, pass.run(), counts);
  }
  return counts;
}

export function compareStormWrites(
  storm: readonly StormEvent[],
  subject: StormSubject,
  heartbeatActiveSeries = false,
): StormComparison {
  return {
    coreV1: countCoreV1Writes(storm, subject),
    eventsV1: countEventsV1Writes(storm, subject, heartbeatActiveSeries),
  };
}
