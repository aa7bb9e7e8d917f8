import type { ProblemEvent } from '../core/types.ts';

export interface RecentEvent extends ProblemEvent {
  readonly source: string;
}

const DEFAULT_CAPACITY = 500;

/** The newest events the monitors reported, for the bundle; older ones fall off. */
export class RecentEvents {
  private readonly items: RecentEvent[] = [];
  private readonly capacity: number;

  constructor(capacity = DEFAULT_CAPACITY) {
    this.capacity = capacity;
  }

  observe(source: string, events: readonly ProblemEvent[]): void {
    for (const e of events) this.items.push({ source, ...e });
    if (this.items.length > this.capacity) this.items.splice(0, this.items.length - this.capacity);
  }

  list(): readonly RecentEvent[] {
    return [...this.items];
  }
}
