import { type MonitorKey, SubsystemHealth } from '../conditions/subsystem.ts';
import type { SubsystemTable } from '../conditions/subsystem-table.ts';
import type { Condition, Status } from '../core/types.ts';

/** What `replay --subsystem-conditions` needs: the tags of the replayed files and the agent's timings. */
export interface ReplaySubsystemOptions {
  readonly table: SubsystemTable;
  readonly windowMs: number;
  readonly holdMs: number;
}

/** Bounds the evaluations after the last line; each one ends at least one window or hold. */
const MAX_TRAILING_EVALUATIONS = 10_000;

/**
 * The agent's subsystem conditions over a replay: every status goes in with the monitor that
 * reported it, the conditions are evaluated after each line and at each window or hold end between
 * lines, and only changes come out (the first evaluation is the baseline, as the defaults are).
 */
export class ReplaySubsystems {
  private readonly health: SubsystemHealth;
  private readonly emit: (c: Condition) => void;
  private readonly known = new Map<string, Condition>();

  constructor(opts: ReplaySubsystemOptions, emit: (c: Condition) => void) {
    this.health = new SubsystemHealth({ ...opts, nodeName: '<node>' });
    this.emit = emit;
  }

  observe(status: Status, monitor: MonitorKey, now: number): void {
    this.health.observe(status, monitor, now);
  }

  /** Evaluates at `now` and reports what changed. */
  evaluate(now: number, baseline = false): void {
    for (const c of this.health.evaluate(now)) {
      const prev = this.known.get(c.type);
      this.known.set(c.type, c);
      if (baseline || (prev && prev.status === c.status && prev.reason === c.reason)) continue;
      this.emit(c);
    }
  }

  /** The next time something leaves its window or hold, if it is not later than `until`. */
  dueBy(until: number): number | undefined {
    const at = this.health.nextExpiry();
    return at !== undefined && at <= until ? at : undefined;
  }

  /** Calls `step` at every expiry up to `until` (Infinity: all that remain after the last line). */
  drain(until: number, step: (at: number) => void): void {
    for (let i = 0; i < MAX_TRAILING_EVALUATIONS; i++) {
      const at = this.dueBy(until);
      if (at === undefined) return;
      step(at);
    }
  }
}
