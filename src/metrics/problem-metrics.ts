import type { Counter, Gauge, Registry } from 'prom-client';
import { counter, gauge, zeroed } from '../core/metrics.ts';
import type { CountedReason } from '../core/types.ts';

export interface ProblemUpdate {
  readonly counted: readonly CountedReason[];
  readonly gauges: readonly {
    readonly type: string;
    readonly reason: string;
    readonly active: boolean;
    readonly template?: string | undefined;
  }[];
}

/**
 * Distinct reasons one reason template may give a series of its own. A templated reason expands to
 * whatever a log line captures, and anyone who can write such a line could otherwise add series without
 * end; past the cap the template's catch-all reason (`Xid${1}` -> `XidOther`) takes the increments.
 */
export const MAX_TEMPLATED_REASONS = 100;

/**
 * NPD's problem metrics, with NPD's exact names and labels (npd.md §4.6): dashboards and alerts written
 * for NPD keep working. At most one reason per condition type is 1 at a time.
 */
export class ProblemMetrics {
  private readonly counter: Counter<'reason'>;
  private readonly gauge: Gauge<'type' | 'reason'>;
  private readonly activeReason = new Map<string, string>();
  private readonly overflow: Counter<'template'>;
  /** Per reason template, the expanded reasons that got a series of their own. */
  private readonly admitted = new Map<string, { readonly reasons: Set<string>; readonly catchAll: string }>();

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
    this.overflow = counter(registry, {
      name: 'npd_problem_reasons_overflow_total',
      help: `Problems counted under a reason template's catch-all reason because the template already had ${MAX_TEMPLATED_REASONS} reasons.`,
      labelNames: ['template'],
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
      if (rule.reason.includes('$')) {
        zeroed(this.overflow, { template: rule.reason });
        continue;
      }
      this.counter.inc({ reason: rule.reason }, 0);
      if (rule.type === 'permanent' && rule.condition)
        this.gauge.set({ type: rule.condition, reason: rule.reason }, 0);
    }
  }

  apply(update: ProblemUpdate): void {
    for (const c of update.counted) this.counter.inc({ reason: typeof c === 'string' ? c : this.admit(c) });
    for (const g of update.gauges) this.setGauge(g.type, this.labelOf(g.reason, g.template), g.active);
  }

  private admit(c: Exclude<CountedReason, string>): string {
    let seen = this.admitted.get(c.template);
    if (!seen) {
      seen = { reasons: new Set(), catchAll: c.catchAll };
      this.admitted.set(c.template, seen);
    }
    if (seen.reasons.has(c.reason)) return c.reason;
    if (seen.reasons.size < MAX_TEMPLATED_REASONS) {
      seen.reasons.add(c.reason);
      return c.reason;
    }
    this.overflow.inc({ template: c.template });
    return c.catchAll;
  }

  /** A gauge follows the counter: the reason's own series if it was admitted, else the catch-all. */
  private labelOf(reason: string, template: string | undefined): string {
    const seen = template === undefined ? undefined : this.admitted.get(template);
    return !seen || seen.reasons.has(reason) ? reason : seen.catchAll;
  }

  private setGauge(type: string, reason: string, active: boolean): void {
    const previous = this.activeReason.get(type);
    if (previous !== undefined && previous !== reason) this.gauge.set({ type, reason: previous }, 0);
    this.gauge.set({ type, reason }, active ? 1 : 0);
    if (active) this.activeReason.set(type, reason);
    else this.activeReason.delete(type);
  }
}
