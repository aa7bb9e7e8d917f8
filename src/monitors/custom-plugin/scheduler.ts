import type { Clock, TimerHandle } from '../../core/clock.ts';

/** A counting semaphore with FIFO waiters: plugins start in rule order, as NPD's channel semaphore does. */
export class Semaphore {
  private available: number;
  private readonly waiters: (() => void)[] = [];
  private closed = false;

  constructor(size: number) {
    this.available = size;
  }

  /** Resolves with a release function; after close() it resolves at once with a no-op. */
  async acquire(): Promise<() => void> {
    if (this.closed) return () => {};
    if (this.available > 0) {
      this.available--;
      return this.releaser();
    }
    await new Promise<void>((resolve) => this.waiters.push(resolve));
    return this.closed ? () => {} : this.releaser();
  }

  /** Wakes every waiter so batches can wind down when the monitor stops. */
  close(): void {
    this.closed = true;
    for (const wake of this.waiters.splice(0)) wake();
  }

  private releaser(): () => void {
    let released = false;
    return () => {
      if (released) return;
      released = true;
      const next = this.waiters.shift();
      // The slot passes straight to the next waiter, so a late acquire() cannot jump the queue.
      if (next) next();
      else this.available++;
    };
  }
}

export interface ScheduleGroup {
  readonly intervalMs: number;
  /** Indices into the monitor's rules. */
  readonly rules: readonly number[];
}

export interface SchedulerOptions {
  readonly clock: Clock;
  /** Uniform in [0, 1), like Math.random; injected so splay is testable. */
  readonly random: () => number;
  readonly splayMs: number;
  readonly groups: readonly ScheduleGroup[];
  /** Runs some rules and settles when all of them have finished. Must not reject. */
  readonly runBatch: (rules: readonly number[]) => Promise<void>;
}

interface GroupState {
  readonly group: ScheduleGroup;
  /** The unjittered time of the next tick; ticks stay on this fixed-rate grid whatever the splay. */
  nextBase: number;
  timer: TimerHandle | undefined;
  busy: boolean;
  /** One tick came while busy; like a Go ticker, further ones are dropped. */
  pending: boolean;
}

/**
 * NPD's plugin scheduling (npd.md §2.2): every rule at once at start, then one ticker per interval
 * group. A group never overlaps itself; a tick that arrives while the group is still running produces
 * one catch-up batch when it finishes. With splay, each tick fires at its grid time plus a fresh random
 * fraction of the splay, capped at the group's interval so ticks never reorder or pile up.
 */
export class PluginScheduler {
  private readonly options: SchedulerOptions;
  private readonly states: GroupState[];
  private stopped = false;

  constructor(options: SchedulerOptions) {
    this.options = options;
    this.states = options.groups.map((group) => ({
      group,
      nextBase: 0,
      timer: undefined,
      busy: true,
      pending: false,
    }));
  }

  /** Groups rule indices by their effective interval, in order of first appearance. */
  static group(intervals: readonly number[]): ScheduleGroup[] {
    const byInterval = new Map<number, number[]>();
    intervals.forEach((ms, i) => {
      const list = byInterval.get(ms) ?? [];
      list.push(i);
      byInterval.set(ms, list);
    });
    return [...byInterval].map(([intervalMs, rules]) => ({ intervalMs, rules }));
  }

  /** Starts the initial batch and the tickers. Returns a promise for the initial batch, for tests. */
  start(): Promise<void> {
    const now = this.options.clock.now();
    for (const s of this.states) {
      s.nextBase = now + s.group.intervalMs;
      this.arm(s);
    }
    const all = this.states.flatMap((s) => s.group.rules).sort((a, b) => a - b);
    return this.options.runBatch(all).finally(() => {
      for (const s of this.states) {
        s.busy = false;
        if (s.pending && !this.stopped) void this.runGroup(s);
      }
    });
  }

  stop(): void {
    this.stopped = true;
    for (const s of this.states) s.timer?.cancel();
  }

  private arm(s: GroupState): void {
    const { clock, random, splayMs } = this.options;
    const interval = s.group.intervalMs;
    const now = clock.now();
    // After a stall (a blocked event loop, a suspended VM) skip missed grid points instead of bursting.
    if (s.nextBase <= now) s.nextBase += (Math.floor((now - s.nextBase) / interval) + 1) * interval;
    const jitter = splayMs > 0 ? Math.floor(random() * Math.min(splayMs, interval)) : 0;
    const due = s.nextBase + jitter;
    s.nextBase += interval;
    s.timer = clock.setTimeout(() => this.onTick(s), due - now);
  }

  private onTick(s: GroupState): void {
    if (this.stopped) return;
    this.arm(s);
    if (s.busy) {
      s.pending = true;
      return;
    }
    void this.runGroup(s);
  }

  private async runGroup(s: GroupState): Promise<void> {
    s.busy = true;
    try {
      do {
        s.pending = false;
        await this.options.runBatch(s.group.rules);
      } while (s.pending && !this.stopped);
    } finally {
      s.busy = false;
    }
  }
}
