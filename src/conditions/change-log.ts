import type { Condition } from '../core/types.ts';

/**
 * The last condition of each type, and a callback for each one whose status or reason differs from
 * the last: the agent logs a condition once per change, not on every heartbeat that repeats it.
 */
export class ConditionChangeLog {
  private readonly last = new Map<string, Condition>();
  private readonly onChange: (c: Condition, first: boolean) => void;

  /** `first` is true for a type's first report. */
  constructor(onChange: (c: Condition, first: boolean) => void) {
    this.onChange = onChange;
  }

  record(c: Condition): void {
    const prev = this.last.get(c.type);
    if (!prev || prev.status !== c.status || prev.reason !== c.reason) this.onChange(c, !prev);
    this.last.set(c.type, c);
  }

  conditions(): IterableIterator<Condition> {
    return this.last.values();
  }
}
