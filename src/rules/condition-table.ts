import { reasonMatcher } from '../core/reason-matcher.ts';
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
  private readonly claims: ((type: string, reason: string) => boolean) | undefined;

  /**
   * `claims`: whether this config's rules can give `reason` to `type`; restore() asks it of aggregated
   * types only. Without it every reason is taken as this config's.
   */
  constructor(
    conditions: readonly ConditionConfig[],
    startedAt: number,
    claims?: (type: string, reason: string) => boolean,
  ) {
    this.startedAt = startedAt;
    this.claims = claims;
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

  /**
   * Every owner of an aggregated type is handed the Node's condition after a restart. A problem only
   * another owner can report (the NVML monitor's pending row remap on GPUUnhealthy, which a GPU reset
   * ends) is not adopted here: this config would hold it until reboot with nothing that could end it.
   */
  private owns(c: Condition): boolean {
    if (c.status === 'False' || !this.claims || !this.defaults.get(c.type)?.aggregate) return true;
    return this.claims(c.type, c.reason);
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
    // A forced restore (a reload) hands back this table's own previous state: nothing to check.
    if (!current || (!force && !this.owns(condition))) return;
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

/** Whether a permanent rule of `rules` can set `type` with `reason` (templates match any expansion). */
export function ruleReasons(
  rules: readonly { type: string; condition?: string | undefined; reason: string }[],
): (type: string, reason: string) => boolean {
  const given = rules
    .filter((r) => r.type === 'permanent' && r.condition !== undefined)
    .map((r) => ({ type: r.condition, matches: reasonMatcher(r.reason) }));
  return (type, reason) => given.some((g) => g.type === type && g.matches(reason));
}

function toDefault(c: ConditionConfig, at: number): Condition {
  return { type: c.type, status: 'False', transition: at, reason: c.reason, message: c.message };
}
