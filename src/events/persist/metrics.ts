import type { Counter, Registry } from 'prom-client';
import type { Logger } from '../../core/logger.ts';
import { counter } from '../../core/metrics.ts';

/**
 * Outcome of one attempt to persist one event: written, failed in a way worth retrying (transport error,
 * timeout, 5xx, 429, I/O error), or refused for good by the receiver (other 4xx).
 */
export type WriteResult = 'success' | 'failure' | 'rejected';

export interface SinkMetrics {
  readonly writes: Counter<'sink' | 'result'>;
  readonly retries: Counter<'sink'>;
  readonly givenUp: Counter<'sink'>;
}

/**
 * Declares (or finds) the persistence sink metrics, with every series of `sink` at 0 so rate() sees the
 * first increment; queue drops live in npd_events_dropped_total.
 */
export function sinkMetrics(registry: Registry, sink: string): SinkMetrics {
  const metrics = declare(registry);
  for (const result of ['success', 'failure', 'rejected'] as const) metrics.writes.inc({ sink, result }, 0);
  metrics.retries.inc({ sink }, 0);
  metrics.givenUp.inc({ sink }, 0);
  return metrics;
}

function declare(registry: Registry): SinkMetrics {
  return {
    writes: counter(registry, {
      name: 'npd_event_sink_writes_total',
      help: 'Attempts to persist one event to a webhook, file or OTLP sink, by result',
      labelNames: ['sink', 'result'],
    }),
    retries: counter(registry, {
      name: 'npd_event_sink_retries_total',
      help: 'Event persistence attempts after the first one',
      labelNames: ['sink'],
    }),
    givenUp: counter(registry, {
      name: 'npd_event_sink_given_up_total',
      help: 'Events a webhook, file or OTLP sink abandoned without persisting them',
      labelNames: ['sink'],
    }),
  };
}

/**
 * Logs an outage once when it starts and once when it ends. A dead receiver fails every attempt of every
 * event, and a warning per attempt would bury the agent's own log; the counters carry the detail.
 */
export class OutageLog {
  private readonly logger: Logger;
  private readonly fields: Record<string, unknown>;
  private down = false;

  constructor(logger: Logger, fields: Record<string, unknown>) {
    this.logger = logger;
    this.fields = fields;
  }

  failed(detail: Record<string, unknown>, msg: string): void {
    if (this.down) {
      this.logger.debug({ ...this.fields, ...detail }, msg);
      return;
    }
    this.down = true;
    this.logger.warn({ ...this.fields, ...detail }, `${msg}; further failures are logged at debug level`);
  }

  succeeded(): void {
    if (!this.down) return;
    this.down = false;
    this.logger.info(this.fields, 'event sink recovered');
  }
}
