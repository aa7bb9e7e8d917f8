import type { Clock } from '../../core/clock.ts';
import { spamKey } from './keys.ts';
import { DEFAULT_LRU_SIZE, Lru } from './lru.ts';
import type { KubeEvent } from './types.ts';

export const DEFAULT_SPAM_BURST = 25;
export const DEFAULT_SPAM_QPS = 1 / 300;

export interface SpamFilterOptions {
  readonly clock: Clock;
  readonly cacheSize?: number;
  readonly burst?: number;
  readonly qps?: number;
  readonly keyFunc?: (event: KubeEvent) => string;
}

/**
 * A passive token bucket (golang.org/x/time/rate's AllowN): refilled from elapsed time when asked, never
 * by a timer, so it needs nothing but the injected clock.
 */
class TokenBucket {
  private tokens: number;
  private last: number;

  constructor(burst: number, now: number) {
    this.tokens = burst;
    this.last = now;
  }

  tryAccept(now: number, burst: number, qps: number): boolean {
    // A clock that went backwards adds nothing.
    const elapsedSeconds = Math.max(0, now - this.last) / 1000;
    const tokens = Math.min(burst, this.tokens + elapsedSeconds * qps);
    // Like x/time/rate, a denial leaves the state untouched.
    if (tokens < 1) return false;
    this.tokens = tokens - 1;
    this.last = now;
    return true;
  }
}

/** EventSourceObjectSpamFilter: one bucket per spam key, starting full; an evicted key starts full again. */
export class SpamFilter {
  private readonly clock: Clock;
  private readonly cache: Lru<string, TokenBucket>;
  private readonly burst: number;
  private readonly qps: number;
  private readonly keyFunc: (event: KubeEvent) => string;

  constructor(opts: SpamFilterOptions) {
    this.clock = opts.clock;
    this.cache = new Lru(opts.cacheSize || DEFAULT_LRU_SIZE);
    this.burst = opts.burst || DEFAULT_SPAM_BURST;
    this.qps = opts.qps || DEFAULT_SPAM_QPS;
    this.keyFunc = opts.keyFunc ?? spamKey;
  }

  /** True when the event must be skipped. */
  filter(event: KubeEvent): boolean {
    const now = this.clock.now();
    const key = this.keyFunc(event);
    const bucket = this.cache.get(key) ?? new TokenBucket(this.burst, now);
    const allowed = bucket.tryAccept(now, this.burst, this.qps);
    this.cache.add(key, bucket);
    return !allowed;
  }
}
