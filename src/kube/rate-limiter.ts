import type { Clock } from '../core/clock.ts';

/** client-go's defaults when QPS or burst is 0 (rest.DefaultQPS, rest.DefaultBurst). */
const DEFAULT_QPS = 5;
const DEFAULT_BURST = 10;

/**
 * client-go's client-side throttle (flowcontrol.NewTokenBucketRateLimiter), which NPD's
 * --kube-api-qps and --kube-api-burst configure: a bucket of `burst` tokens refilled at `qps` per
 * second; a request that finds it empty waits for its token. Each call reserves a token at once, so
 * waiters are served in arrival order. A negative QPS disables throttling, as in client-go.
 */
export class RateLimiter {
  private readonly qps: number;
  private readonly burst: number;
  private readonly clock: Clock;
  private tokens: number;
  private last: number;

  constructor(qps: number, burst: number, clock: Clock) {
    this.qps = qps === 0 ? DEFAULT_QPS : qps;
    this.burst = burst <= 0 ? DEFAULT_BURST : burst;
    this.clock = clock;
    this.tokens = this.burst;
    this.last = this.monotonicMs();
  }

  /** Milliseconds the next request must wait for its token; the token is taken now. */
  reserve(): number {
    if (this.qps < 0) return 0;
    const now = this.monotonicMs();
    this.tokens = Math.min(this.burst, this.tokens + (Math.max(0, now - this.last) / 1000) * this.qps);
    this.last = now;
    this.tokens -= 1;
    return this.tokens >= 0 ? 0 : Math.ceil((-this.tokens / this.qps) * 1000);
  }

  /** Wall-clock steps (NTP, a VM resume) must neither mint tokens nor take them away. */
  private monotonicMs(): number {
    return Number(this.clock.hrtime() / 1_000_000n);
  }

  /** Resolves when the request may go; returns how long it waited, in milliseconds. */
  async wait(): Promise<number> {
    const ms = this.reserve();
    if (ms > 0) await new Promise<void>((resolve) => this.clock.setTimeout(resolve, ms));
    return ms;
  }
}
