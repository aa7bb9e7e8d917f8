import type { Counter, Gauge, Registry } from 'prom-client';
import { counter, gauge } from '../core/metrics.ts';

export interface ProblemUpdate {
  readonly counted: readonly string[];
  readonly gauges: readonly { readonly type: string; readonly reason: string; readonly active: boolean }[];
}

/**
 * NPD's problem metrics, with NPD's exact names and labels (npd.md §4.6): dashboards and alerts written
 * for NPD keep working. At most one reason per condition type is 1 at a time.
 */
export class ProblemMetrics {
  private readonly counter: Counter<'reason'>;
  private readonly gauge: Gauge<'type' | 'reason'>;
  private readonly activeReason = new Map<string, string>();

  constructor(registry: Registry) {
    this.counter = counter(registry, {
      name: 'problem_counter',
      help: 'Number of times a specific type of problem have occurred.',
      labelNames: ['reason'],
    });
    this.gauge = gauge(registry, {
      name: 'problem_gauge',
      help: 'Whether a specific type of problem is affecting the node or not.',
      labelNames: ['type', 'reason'],
    });
  }

  /** Pre-creates the zero series so dashboards see every known problem before it happens. */
  initialise(
    rules: readonly {
      readonly type: string;
      readonly reason: string;
      readonly condition?: string | undefined;
    }[],
  ): void {
    for (const rule of rules) {
      if (rule.reason.includes('$')) continue;
      this.counter.inc({ reason: rule.reason }, 0);
      if (rule.type === 'permanent' && rule.condition)
        this.gauge.set({ type: rule.condition, reason: rule.reason }, 0);
    }
  }

  apply(update: ProblemUpdate): void {
    for (const reason of update.counted) this.counter.inc({ reason });
    for (const g of update.gauges) this.setGauge(g.type, g.reason, g.active);
  }

  private setGauge(type: string, reason: string, active: boolean): void {
    const previous = this.activeReason.get(type);
    if (previous !== undefined && previous !== reason) this.gauge.set({ type, reason: previous }, 0);
    this.gauge.set({ type, reason }, active ? 1 : 0);
    if (active) this.activeReason.set(type, reason);
    else this.activeReason.delete(type);
  }
}
