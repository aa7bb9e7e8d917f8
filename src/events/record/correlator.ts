import type { Clock } from '../../core/clock.ts';
import { EventAggregator } from './aggregator.ts';
import { EventLogger } from './event-logger.ts';
import { monotonicNanos, type NanoSource } from './names.ts';
import { SpamFilter } from './spam-filter.ts';
import type { EventPatch, KubeEvent } from './types.ts';

/** client-go's CorrelatorOptions; a zero or missing field takes the default, it never disables a stage. */
export interface CorrelatorOptions {
  readonly clock: Clock;
  /** Names aggregate events; share the recorder's source so names never collide. */
  readonly nanos?: NanoSource;
  readonly cacheSize?: number;
  readonly burst?: number;
  readonly qps?: number;
  readonly maxEvents?: number;
  readonly maxIntervalMs?: number;
  readonly spamKeyFunc?: (event: KubeEvent) => string;
}

export interface CorrelationResult {
  readonly event: KubeEvent;
  readonly patch: EventPatch | undefined;
  /** The spam filter said no: write nothing. */
  readonly skip: boolean;
  /** The event was replaced by a "(combined from similar events)" aggregate. */
  readonly aggregated: boolean;
}

/**
 * EventCorrelator: aggregate, then observe (which counts even what is about to be filtered), then spam
 * filter. Synchronous and pure apart from its caches and the injected clock.
 */
export class EventCorrelator {
  private readonly aggregator: EventAggregator;
  private readonly logger: EventLogger;
  private readonly spamFilter: SpamFilter;

  constructor(opts: CorrelatorOptions) {
    this.aggregator = new EventAggregator({
      clock: opts.clock,
      nanos: opts.nanos ?? monotonicNanos(opts.clock),
      cacheSize: opts.cacheSize,
      maxEvents: opts.maxEvents,
      maxIntervalMs: opts.maxIntervalMs,
    });
    this.logger = new EventLogger(opts.cacheSize);
    this.spamFilter = new SpamFilter({
      clock: opts.clock,
      cacheSize: opts.cacheSize,
      burst: opts.burst,
      qps: opts.qps,
      keyFunc: opts.spamKeyFunc,
    });
  }

  correlate(newEvent: KubeEvent): CorrelationResult {
    const { event: aggregate, key, aggregated } = this.aggregator.aggregate(newEvent);
    const { event, patch } = this.logger.observe(aggregate, key);
    const skip = this.spamFilter.filter(event);
    return { event, patch, skip, aggregated };
  }

  /** Call after a successful write with what the server returned. */
  updateState(serverEvent: KubeEvent): void {
    this.logger.updateState(serverEvent);
  }
}
