import { keepTransition } from '../core/transition.ts';
import type { Condition } from '../core/types.ts';
import type { ConditionConfig } from './config.ts';

/**
 * A monitor's conditions: each starts False with its default reason and message (as NPD publishes
 * them before anything is read), and can resume from what the Node showed after a restart.
 */
export class ConditionTable {
  private readonly state = new Map<string, Condition>();
  private readonly defaults: ReadonlyMap<string, ConditionConfig>;
  private readonly startedAt: number;

  constructor(conditions: readonly ConditionConfig[], startedAt: number) {
    this.startedAt = startedAt;
    this.defaults = new Map(conditions.map((c) => [c.type, c]));
    for (const c of conditions) this.state.set(c.type, toDefault(c, startedAt));
  }

  get(type: string): Condition | undefined {
    return this.state.get(type);
  }

  default(type: string): ConditionConfig | undefined {
    return this.defaults.get(type);
  }

  defaultsInOrder(): IterableIterator<[string, ConditionConfig]> {
    return this.defaults.entries();
  }

  /** Takes a monitor's new value; its transition time moves only when the status does. */
  set(condition: Condition): void {
    const current = this.state.get(condition.type);
    if (current) this.state.set(condition.type, keepTransition(current, condition));
  }

  all(): Condition[] {
    return [...this.state.values()];
  }

  /**
   * Resumes an owned condition from the Node unless something already changed it since start (a
   * lookback replay or a probe result knows better than the Node); `force` is for reloads.
   */
  restore(condition: Condition, force = false): void {
    const current = this.state.get(condition.type);
    if (!current) return;
    if (force || (current.status === 'False' && current.transition === this.startedAt)) {
      this.state.set(condition.type, condition);
    } else if (
      current.status === 'True' &&
      condition.status === 'True' &&
      condition.transition < current.transition
    ) {
      // A lookback replay re-raised what the Node already showed True from this boot (ownership
      // offers no other): the problem has held since the Node's older transition, so that clock
      // stands and a restart does not postpone a repair.
      this.state.set(condition.type, { ...current, transition: condition.transition });
    }
  }
}

function toDefault(c: ConditionConfig, at: number): Condition {
  return { type: c.type, status: 'False', transition: at, reason: c.reason, message: c.message };
}
