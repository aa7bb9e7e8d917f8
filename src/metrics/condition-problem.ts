import type { Gauge, Registry } from 'prom-client';
import { gauge } from '../core/metrics.ts';
import { isProblem, problemWhen } from '../core/polarity.ts';
import type { Condition } from '../core/types.ts';

type Label = 'type' | 'status' | 'problem_when' | 'reason';
type Labels = Record<Label, string>;

export const CONDITION_PROBLEM_METRIC = 'npd_condition_problem';

/**
 * Every condition the agent holds, in one polarity: 1 while it means a problem, whichever status that
 * is (True for NPD's types, False for `KernelReady` and the other subsystem types), so
 * `npd_condition_problem == 1` lists every problem on every node. One series per condition type: the
 * labels carry the current status and reason, and a change replaces the type's series instead of
 * leaving the old one behind. `Unknown` is 0 with `status="Unknown"`: visible, not a problem.
 */
export class ConditionProblemGauge {
  private readonly gauge: Gauge<Label>;
  private readonly current = new Map<string, Labels>();

  constructor(registry: Registry) {
    this.gauge = gauge(registry, {
      name: CONDITION_PROBLEM_METRIC,
      help: 'Whether a node condition means a problem (1) or not (0), whatever its polarity; one series per condition type.',
      labelNames: ['type', 'status', 'problem_when', 'reason'],
    });
  }

  /** Takes a condition's current value; called with every update, unchanged ones included. Bound. */
  readonly observe = (c: Condition): void => {
    const labels: Labels = {
      type: c.type,
      status: c.status,
      problem_when: problemWhen(c.type),
      reason: c.reason,
    };
    const previous = this.current.get(c.type);
    if (previous && (previous.status !== c.status || previous.reason !== c.reason))
      this.gauge.remove(previous);
    this.gauge.set(labels, isProblem(c) ? 1 : 0);
    this.current.set(c.type, labels);
  };

  /** Drops the series of every type not in `types`: a reload removed the monitor that owned it. */
  retain(types: Iterable<string>): void {
    const keep = new Set(types);
    for (const [type, labels] of this.current) {
      if (keep.has(type)) continue;
      this.gauge.remove(labels);
      this.current.delete(type);
    }
  }
}
