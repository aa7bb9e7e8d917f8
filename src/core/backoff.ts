import type { Clock } from './clock.ts';

/**
 * Capped exponential backoff: `initialMs` after the first failure, doubling with each failure in a
 * row, never more than `maxMs`. Callers add their own jitter.
 */
export function backoffMs(failures: number, initialMs: number, maxMs: number): number {
  return Math.min(maxMs, initialMs * 2 ** Math.min(failures - 1, 30));
}

/**
 * Retry sleeps on the injected clock that a shutdown cuts short: stop() wakes every sleeper with
 * false, and every later sleep resolves false at once.
 */
export class RetrySleeper {
  private readonly clock: Clock;
  private readonly wakes = new Set<() => void>();
  private stopped = false;

  constructor(clock: Clock) {
    this.clock = clock;
  }

  /** Resolves true when the delay elapsed, false when stop() cut it short. */
  sleep(ms: number): Promise<boolean> {
    if (this.stopped) return Promise.resolve(false);
    return new Promise((resolve) => {
      const wake = () => {
        timer.cancel();
        this.wakes.delete(wake);
        resolve(false);
      };
      const timer = this.clock.setTimeout(() => {
        this.wakes.delete(wake);
        resolve(true);
      }, ms);
      this.wakes.add(wake);
    });
  }

  stop(): void {
    this.stopped = true;
    for (const wake of [...this.wakes]) wake();
  }
}
