/**
 * Time is injected everywhere so the core can be tested with a fake clock and no real sleeps.
 */
export interface TimerHandle {
  cancel(): void;
}

export interface Clock {
  /** Epoch milliseconds. */
  now(): number;
  /** Monotonic nanoseconds, for durations and strictly increasing identifiers. */
  hrtime(): bigint;
  setTimeout(fn: () => void, ms: number): TimerHandle;
}

export const systemClock: Clock = {
  now: () => Date.now(),
  hrtime: () => process.hrtime.bigint(),
  setTimeout(fn, ms) {
    const t = setTimeout(fn, ms);
    t.unref();
    return { cancel: () => clearTimeout(t) };
  },
};

interface PendingTimer {
  readonly at: number;
  readonly seq: number;
  readonly fn: () => void;
  cancelled: boolean;
}

/** A manual clock: timers fire only inside advance(), in due-time order. */
export class FakeClock implements Clock {
  private current: number;
  private seq = 0;
  private timers: PendingTimer[] = [];

  constructor(start = Date.UTC(2026, 0, 1)) {
    this.current = start;
  }

  now(): number {
    return this.current;
  }

  hrtime(): bigint {
    return BigInt(this.current) * 1_000_000n;
  }

  setTimeout(fn: () => void, ms: number): TimerHandle {
    const timer: PendingTimer = { at: this.current + Math.max(0, ms), seq: this.seq++, fn, cancelled: false };
    this.timers.push(timer);
    return {
      cancel: () => {
        timer.cancelled = true;
      },
    };
  }

  /** Moves time forward, firing every timer that falls due, including ones scheduled meanwhile. */
  advance(ms: number): void {
    const end = this.current + ms;
    for (;;) {
      const next = this.nextDue(end);
      if (!next) break;
      this.timers = this.timers.filter((t) => t !== next);
      this.current = Math.max(this.current, next.at);
      next.fn();
    }
    this.current = end;
  }

  set(ms: number): void {
    this.advance(ms - this.current);
  }

  /**
   * Jumps to `ms` (never backwards) and fires, in due order, every timer due by then that was armed
   * before the jump, all at the time jumped to: as a Node timer fires once, late, after the host was
   * suspended. A timer that re-arms itself thus runs once per jump, not once per period of the gap,
   * which is how replay crosses hours of recorded log in one step.
   */
  jumpTo(ms: number): void {
    if (ms > this.current) this.current = ms;
    const due = this.timers
      .filter((t) => !t.cancelled && t.at <= this.current)
      .sort((a, b) => a.at - b.at || a.seq - b.seq);
    this.timers = this.timers.filter((t) => !t.cancelled && t.at > this.current);
    for (const t of due) if (!t.cancelled) t.fn();
  }

  pendingTimers(): number {
    return this.timers.filter((t) => !t.cancelled).length;
  }

  private nextDue(end: number): PendingTimer | undefined {
    this.timers = this.timers.filter((t) => !t.cancelled);
    let best: PendingTimer | undefined;
    for (const t of this.timers) {
      if (t.at > end) continue;
      if (!best || t.at < best.at || (t.at === best.at && t.seq < best.seq)) best = t;
    }
    return best;
  }
}
