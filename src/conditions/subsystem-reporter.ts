import type { Clock, TimerHandle } from '../core/clock.ts';
import type { Condition, Status } from '../core/types.ts';
import type { MonitorKey, SubsystemHealth } from './subsystem.ts';

/** How often pending changes are folded in, as the condition manager does (NPD's updatePeriod). */
export const SUBSYSTEM_TICK_MS = 1_000;

export interface SubsystemReporterOptions {
  readonly health: SubsystemHealth;
  readonly clock: Clock;
  /** Receives every subsystem condition after each evaluation; unchanged ones too (callers dedupe). */
  readonly publish: (conditions: readonly Condition[]) => void;
  readonly tickMs?: number;
}

/**
 * Drives SubsystemHealth on a tick: statuses mark it dirty, and it is evaluated once per tick when
 * dirty or when an event leaves the window, so a flood of statuses costs one evaluation per tick.
 */
export class SubsystemReporter {
  private readonly health: SubsystemHealth;
  private readonly clock: Clock;
  private readonly publish: (conditions: readonly Condition[]) => void;
  private readonly tickMs: number;
  private timer: TimerHandle | undefined;
  private dirty = true;

  constructor(opts: SubsystemReporterOptions) {
    this.health = opts.health;
    this.clock = opts.clock;
    this.publish = opts.publish;
    this.tickMs = opts.tickMs ?? SUBSYSTEM_TICK_MS;
  }

  start(): void {
    if (this.timer) return;
    this.schedule();
  }

  stop(): void {
    this.timer?.cancel();
    this.timer = undefined;
  }

  observe(status: Status, monitor: MonitorKey): void {
    this.health.observe(status, monitor, this.clock.now());
    this.dirty = true;
  }

  forget(monitor: MonitorKey): void {
    this.health.forget(monitor);
    this.dirty = true;
  }

  restore(conditions: readonly Condition[]): void {
    this.health.restore(conditions, this.clock.now());
    this.dirty = true;
  }

  /** Evaluates now if anything changed or expired; the tick calls it too. */
  flush(): void {
    const now = this.clock.now();
    const expiry = this.health.nextExpiry();
    if (!this.dirty && (expiry === undefined || expiry > now)) return;
    this.dirty = false;
    this.publish(this.health.evaluate(now));
  }

  private schedule(): void {
    this.timer = this.clock.setTimeout(() => {
      this.flush();
      this.schedule();
    }, this.tickMs);
  }
}
