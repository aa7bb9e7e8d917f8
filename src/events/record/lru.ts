/** client-go gives the spam filter, the aggregator and the event logger one LRU of this size each. */
export const DEFAULT_LRU_SIZE = 4096;

/**
 * A bounded map that evicts the least recently used key. A Map iterates in insertion order, so moving a
 * key to the end on every touch keeps the eviction candidate at the front. Both get and add count as use,
 * as in golang/groupcache's lru, which client-go's caches are built on.
 */
export class Lru<K, V> {
  readonly capacity: number;
  private readonly entries = new Map<K, V>();

  constructor(capacity = DEFAULT_LRU_SIZE) {
    // A zero or negative size means "default" in client-go's populateDefaults, never "disabled".
    this.capacity = capacity > 0 ? Math.floor(capacity) : DEFAULT_LRU_SIZE;
  }

  get size(): number {
    return this.entries.size;
  }

  get(key: K): V | undefined {
    if (!this.entries.has(key)) return undefined;
    const value = this.entries.get(key) as V;
    this.entries.delete(key);
    this.entries.set(key, value);
    return value;
  }

  /** Reads without refreshing recency, for tests and diagnostics. */
  peek(key: K): V | undefined {
    return this.entries.get(key);
  }

  has(key: K): boolean {
    return this.entries.has(key);
  }

  add(key: K, value: V): void {
    this.entries.delete(key);
    this.entries.set(key, value);
    if (this.entries.size > this.capacity) {
      const oldest = this.entries.keys().next();
      if (!oldest.done) this.entries.delete(oldest.value);
    }
  }

  delete(key: K): boolean {
    return this.entries.delete(key);
  }

  keys(): IterableIterator<K> {
    return this.entries.keys();
  }
}
