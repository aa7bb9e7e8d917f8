import type { Clock, TimerHandle } from '../core/clock.ts';

interface Timer {
  readonly at: number;
  readonly seq: number;
  readonly fn: () => void;
  cancelled: boolean;
}

/**
 * Replayed time: it jumps from record to record. A timer that falls due inside a jump fires once, at the
 * time jumped to, as a Node timer does after the host was suspended; a periodic timer that re-arms
 * itself therefore costs one call per record, not one per period of the gap.
 */
export class ReplayClock implements Clock {
  private current: number;
  private seq = 0;
  private timers: Timer[] = [];

  constructor(start: number) {
    this.current = start;
  }

  now(): number {
    return this.current;
  }

  hrtime(): bigint {
    return BigInt(this.current) * 1_000_000n;
  }

  setTimeout(fn: () => void, ms: number): TimerHandle {
    const timer: Timer = { at: this.current + Math.max(0, ms), seq: this.seq++, fn, cancelled: false };
    this.timers.push(timer);
    return {
      cancel: () => {
        timer.cancelled = true;
      },
    };
  }

  /**
   * Moves to `ms` (never backwards: records out of order keep the latest time) and fires, in due order,
   * every timer due by then that was armed before the jump.
   */
  jumpTo(ms: number): void {
    if (ms > this.current) this.current = ms;
    const due = this.timers
      .filter((t) => !t.cancelled && t.at <= this.current)
      .sort((a, b) => a.at - b.at || a.seq - b.seq);
    this.timers = this.timers.filter((t) => !t.cancelled && t.at > this.current);
    for (const t of due) if (!t.cancelled) t.fn();
  }
}
