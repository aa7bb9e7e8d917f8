import { eventKey } from './keys.ts';
import { DEFAULT_LRU_SIZE, Lru } from './lru.ts';
import type { EventPatch, KubeEvent } from './types.ts';

interface EventLog {
  readonly count: number;
  readonly firstTimestamp: number;
  readonly name: string;
  readonly resourceVersion: string | undefined;
}

export interface Observation {
  readonly event: KubeEvent;
  /** Present only for a repeat: the strategic-merge patch client-go would send. */
  readonly patch: EventPatch | undefined;
}

/**
 * client-go's eventLogger: counts repeats under a cache key and turns a repeat into a patch of the object
 * written the first time. The cache is updated here, before any API call, so an occurrence that is later
 * spam-filtered or fails to write still raises the next count.
 */
export class EventLogger {
  private readonly cache: Lru<string, EventLog>;

  constructor(cacheSize = DEFAULT_LRU_SIZE) {
    this.cache = new Lru(cacheSize || DEFAULT_LRU_SIZE);
  }

  observe(newEvent: KubeEvent, key: string): Observation {
    const event: KubeEvent = { ...newEvent };
    const last = this.cache.get(key);
    let patch: EventPatch | undefined;
    if (last && last.count > 0) {
      event.name = last.name;
      event.resourceVersion = last.resourceVersion;
      event.firstTimestamp = last.firstTimestamp;
      event.count = last.count + 1;
      // Exactly the fields a two-way merge from {count: 0, lastTimestamp: epoch, message: ""} yields.
      patch = { count: event.count, lastTimestamp: event.lastTimestamp, message: event.message };
    }
    this.remember(key, event);
    return { event, patch };
  }

  /** Records what the server returned, under the server event's own eventKey. */
  updateState(serverEvent: KubeEvent): void {
    this.remember(eventKey(serverEvent), serverEvent);
  }

  /** For tests: the cached count under a key, without touching recency. */
  countFor(key: string): number | undefined {
    return this.cache.peek(key)?.count;
  }

  private remember(key: string, event: KubeEvent): void {
    this.cache.add(key, {
      count: event.count,
      firstTimestamp: event.firstTimestamp,
      name: event.name,
      resourceVersion: event.resourceVersion,
    });
  }
}
