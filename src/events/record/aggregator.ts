import type { Clock } from '../../core/clock.ts';
import { aggregateKeys, eventKey } from './keys.ts';
import { DEFAULT_LRU_SIZE, Lru } from './lru.ts';
import type { NanoSource } from './names.ts';
import type { KubeEvent } from './types.ts';

export const AGGREGATE_MESSAGE_PREFIX = '(combined from similar events): ';
export const DEFAULT_AGGREGATE_MAX_EVENTS = 10;
export const DEFAULT_AGGREGATE_INTERVAL_MS = 600_000;

export interface AggregatorOptions {
  readonly clock: Clock;
  readonly nanos: NanoSource;
  readonly cacheSize?: number;
  readonly maxEvents?: number;
  readonly maxIntervalMs?: number;
}

interface AggregateRecord {
  readonly localKeys: Set<string>;
  lastTimestamp: number;
}

export interface AggregateResult {
  readonly event: KubeEvent;
  /** The event logger's cache key: the eventKey, or the aggregate key for an aggregate event. */
  readonly key: string;
  readonly aggregated: boolean;
}

/**
 * EventAggregator: once one group (same source, object, type, reason and reporter) has produced
 * `maxEvents` distinct messages within a window that slides with every event, each further new message
 * is replaced by one combined event per group.
 */
export class EventAggregator {
  private readonly clock: Clock;
  private readonly nanos: NanoSource;
  private readonly cache: Lru<string, AggregateRecord>;
  private readonly maxEvents: number;
  private readonly maxIntervalMs: number;

  constructor(opts: AggregatorOptions) {
    this.clock = opts.clock;
    this.nanos = opts.nanos;
    this.cache = new Lru(opts.cacheSize || DEFAULT_LRU_SIZE);
    this.maxEvents = opts.maxEvents || DEFAULT_AGGREGATE_MAX_EVENTS;
    this.maxIntervalMs = opts.maxIntervalMs || DEFAULT_AGGREGATE_INTERVAL_MS;
  }

  aggregate(event: KubeEvent): AggregateResult {
    const now = this.clock.now();
    const [aggregateKey, localKey] = aggregateKeys(event);
    let record = this.cache.get(aggregateKey);
    if (!record || now - record.lastTimestamp > this.maxIntervalMs) {
      record = { localKeys: new Set(), lastTimestamp: now };
    }
    record.localKeys.add(localKey);
    record.lastTimestamp = now;
    this.cache.add(aggregateKey, record);
    if (record.localKeys.size < this.maxEvents) {
      return { event, key: eventKey(event), aggregated: false };
    }
    // Go pops an arbitrary member; the oldest inserted is the deterministic choice. The cached set shrinks
    // too, so every later new message in the window aggregates again.
    const oldest = record.localKeys.values().next();
    if (!oldest.done) record.localKeys.delete(oldest.value);
    return { event: this.combined(event, now), key: aggregateKey, aggregated: true };
  }

  /** A fresh event: no reporting fields, and a name that skips GenerateEventName's validity check. */
  private combined(event: KubeEvent, now: number): KubeEvent {
    return {
      name: `${event.involvedObject.name}.${this.nanos().toString(16)}`,
      namespace: event.namespace,
      // Not in client-go's combined event; kept so a flood still says what raised it (no key reads it).
      ...(event.annotations === undefined ? {} : { annotations: event.annotations }),
      involvedObject: event.involvedObject,
      reason: event.reason,
      message: AGGREGATE_MESSAGE_PREFIX + event.message,
      type: event.type,
      source: event.source,
      reportingComponent: '',
      reportingInstance: '',
      firstTimestamp: now,
      lastTimestamp: now,
      count: 1,
    };
  }
}
