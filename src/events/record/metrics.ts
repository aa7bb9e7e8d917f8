import type { Counter, Registry } from 'prom-client';
import { counter } from '../../core/metrics.ts';

/**
 * Where an event can be lost between the recorder and the API server. client-go logs only the incoming
 * drop and is silent about the others; here every one is counted.
 * - incoming: the broadcaster's incoming queue was full (actionOrDrop)
 * - watcher: one watcher's queue was full (DropIfChannelFull)
 * - stopped: recorded after the broadcaster was shut down
 * - invalid_type: the type was neither Normal nor Warning
 * - flush: still queued for the API sink when the shutdown grace period ran out
 */
export type DropPoint = 'incoming' | 'watcher' | 'stopped' | 'invalid_type' | 'flush';

/**
 * Why the API sink abandoned an event:
 * - retries_exhausted: 12 attempts answered with a 429 or 5xx and Retry-After (and, with the outage hold
 *   turned off, transport failures, as in client-go)
 * - expired: the API server stayed unreachable until the event was older than the hold (its TTL there)
 * - rejected: an HTTP status that is not retried
 * - shutdown: the agent stopped while the event was waiting to be retried or in flight
 */
export type GiveUpReason = 'retries_exhausted' | 'expired' | 'rejected' | 'shutdown';

export interface RecorderMetrics {
  readonly dropped: Counter<'point' | 'source' | 'watcher'>;
  readonly recorded: Counter<'source' | 'type'>;
  readonly aggregated: Counter<'source'>;
  readonly spamFiltered: Counter<'source'>;
  readonly retries: Counter<'source'>;
  readonly givenUp: Counter<'source' | 'reason'>;
  readonly written: Counter<'source' | 'verb'>;
  readonly handlerErrors: Counter<'source' | 'watcher'>;
}

/** Declares (or finds, if another component already did) every recorder metric in `registry`. */
export function recorderMetrics(registry: Registry): RecorderMetrics {
  const c = <L extends string>(name: string, help: string, labelNames: readonly L[]): Counter<L> =>
    counter<L>(registry, { name, help, labelNames });
  return {
    dropped: c('npd_events_dropped_total', 'Events lost before reaching a sink, by drop point', [
      'point',
      'source',
      'watcher',
    ]),
    recorded: c('npd_events_recorded_total', 'Events accepted by a recorder into its broadcaster', [
      'source',
      'type',
    ]),
    aggregated: c(
      'npd_events_aggregated_total',
      'Events replaced by a "(combined from similar events)" aggregate',
      ['source'],
    ),
    spamFiltered: c(
      'npd_events_spam_filtered_total',
      'Events not written: their spam token bucket was empty',
      ['source'],
    ),
    retries: c('npd_events_retries_total', 'Event write attempts after the first one', ['source']),
    givenUp: c('npd_events_given_up_total', 'Events abandoned without being written', ['source', 'reason']),
    written: c('npd_events_written_total', 'Successful event writes to the API sink, by HTTP verb', [
      'source',
      'verb',
    ]),
    handlerErrors: c(
      'npd_events_watcher_errors_total',
      'Broadcaster watcher handlers that threw; the event is lost for that watcher',
      ['source', 'watcher'],
    ),
  };
}
