import { keepTransition } from '../core/transition.ts';
import type { Condition, ConditionStatus } from '../core/types.ts';

const SEVERITY: Readonly<Record<ConditionStatus, number>> = { True: 2, Unknown: 1, False: 0 };

/**
 * Several monitors reporting one condition type (opted in with `aggregate: true`): worst status
 * wins (True over Unknown over False), and among equals the source that sorts first supplies the
 * reason and message, so the result never depends on which monitor spoke last (NPD #566, #664).
 * Its transition time moves only when the resolved status does, to the time of the report that moved
 * it: another monitor taking over a True condition with its own reason does not restart a repair
 * controller's clock.
 */
export class ConditionAggregator {
  private readonly byType = new Map<string, Map<string, Condition>>();
  private readonly resolved = new Map<string, Condition>();

  /** Returns the resolved condition for this type after taking the source's latest value. */
  update(source: string, condition: Condition): Condition {
    let entries = this.byType.get(condition.type);
    if (!entries) {
      entries = new Map();
      this.byType.set(condition.type, entries);
    }
    entries.set(source, condition);
    const prev = this.resolved.get(condition.type);
    let next = keepTransition(prev, resolve(entries));
    // The resolved status changed with this report, so now is when: the winner's own time may be older.
    if (prev && prev.status !== next.status) next = { ...next, transition: condition.transition };
    this.resolved.set(condition.type, next);
    return next;
  }

  /** What `source` itself last reported of each aggregated type, before merging. */
  reportedBy(source: string): Condition[] {
    const own: Condition[] = [];
    for (const entries of this.byType.values()) {
      const c = entries.get(source);
      if (c) own.push(c);
    }
    return own;
  }
}

function resolve(entries: ReadonlyMap<string, Condition>): Condition {
  let best: [string, Condition] | undefined;
  for (const entry of entries) {
    if (!best || worse(entry, best)) best = entry;
  }
  return (best as [string, Condition])[1];
}

function worse([source, c]: [string, Condition], [bestSource, best]: [string, Condition]): boolean {
  const diff = SEVERITY[c.status] - SEVERITY[best.status];
  return diff > 0 || (diff === 0 && source < bestSource);
}
