/**
 * Every event the fleet recorded is either on the API server or counted as lost: the events with a tag
 * (unique messages, one Event object each) found by one LIST, against the growth of the agents' loss
 * counters (npd_events_given_up_total, npd_events_dropped_total, npd_events_spam_filtered_total) while
 * they were written. Settled once nothing is still being retried, i.e. found + counted = recorded.
 */
import type { ControlPlane } from '../e2e/harness/controlplane.ts';
import { FLEET_EVENT_REASON, type MetricTotals } from './protocol.ts';
import { sleep } from './util.ts';
import { type Fleet, metricDelta, metricSum } from './workers.ts';

export interface EventAccount {
  readonly recorded: number;
  /** Events with the tag on the API server. */
  readonly written: number;
  readonly givenUp: number;
  /** npd_events_given_up_total's growth by reason (retries_exhausted, rejected, shutdown). */
  readonly givenUpBy: Record<string, number>;
  readonly dropped: number;
  readonly spamFiltered: number;
  /** recorded - written - counted losses: > 0 means lost without a count (or still in flight). */
  readonly unaccounted: number;
}

export async function taggedEvents(cp: ControlPlane, tag: string): Promise<number> {
  const r = await cp.request(
    'GET',
    `/api/v1/namespaces/default/events?fieldSelector=reason%3D${FLEET_EVENT_REASON}`,
    {
      timeoutMs: 60_000,
    },
  );
  const items = (r.json as { items?: { message?: string }[] } | undefined)?.items ?? [];
  return items.filter((e) => e.message?.startsWith(`${tag} `)).length;
}

function account(recorded: number, written: number, d: MetricTotals): EventAccount {
  const givenUp = metricSum(d, 'npd_events_given_up_total');
  const givenUpBy: Record<string, number> = {};
  for (const [k, v] of Object.entries(d)) {
    const reason = /^npd_events_given_up_total\{.*reason="([^"]+)"/.exec(k)?.[1];
    if (reason && v > 0) givenUpBy[reason] = (givenUpBy[reason] ?? 0) + v;
  }
  const dropped = metricSum(d, 'npd_events_dropped_total');
  const spamFiltered = metricSum(d, 'npd_events_spam_filtered_total');
  return {
    recorded,
    written,
    givenUp,
    givenUpBy,
    dropped,
    spamFiltered,
    unaccounted: recorded - written - givenUp - dropped - spamFiltered,
  };
}

/**
 * Polls until the tagged events settle (nothing unaccounted) or `timeoutMs` passes. `before` is the
 * fleet's metrics from just before the events were recorded; no other events may be in flight.
 */
export async function settleEvents(
  cp: ControlPlane,
  fleet: Fleet,
  tag: string,
  recorded: number,
  before: MetricTotals,
  timeoutMs: number,
): Promise<EventAccount> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const a = account(recorded, await taggedEvents(cp, tag), metricDelta(await fleet.metrics(), before));
    if (a.unaccounted <= 0 || Date.now() >= deadline) return a;
    await sleep(2000);
  }
}
