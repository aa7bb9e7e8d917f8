import { ConditionAggregator } from '../conditions/aggregate.ts';
import { ConditionChangeLog } from '../conditions/change-log.ts';
import type { Logger } from '../core/logger.ts';
import type { Condition, ProblemEvent, Status } from '../core/types.ts';

/** Where the detector sends what the monitors report. */
export interface ProblemOutlets {
  /** Every condition update, once aggregated: the condition manager, the taint controller. */
  readonly conditions: readonly ((condition: Condition) => void)[];
  /** Every event, with the source that reported it: the event dispatcher, the diagnostics log. */
  readonly events: readonly ((source: string, events: readonly ProblemEvent[]) => void)[];
  /** Every status as the monitor reported it, before aggregation, with that monitor: the subsystem conditions. */
  readonly statuses?: readonly ((status: Status, monitor: object) => void)[];
}

export interface ProblemDetectorOptions {
  readonly logger: Logger;
  /** Condition types reported by more than one monitor; their statuses are merged first. */
  readonly aggregated: ReadonlySet<string>;
  readonly outlets: ProblemOutlets;
}

/**
 * NPD's problem detector: statuses come in from every monitor, conditions of types several monitors
 * report are aggregated, each change is logged once, and conditions and events fan out to the
 * exporter. It remembers which monitor reported which condition, so a monitor rebuilt on reload can
 * resume its own conditions.
 */
export class ProblemDetector {
  private readonly outlets: ProblemOutlets;
  private readonly aggregator = new ConditionAggregator();
  private aggregated: ReadonlySet<string>;
  private readonly changes: ConditionChangeLog;
  private readonly owner = new Map<string, string>();

  constructor(opts: ProblemDetectorOptions) {
    this.outlets = opts.outlets;
    // A condition's first report is in the start-up summary unless it is True; changes are logged.
    this.changes = new ConditionChangeLog((c, first) =>
      opts.logger[first && c.status !== 'True' ? 'debug' : 'info'](
        {
          source: this.owner.get(c.type),
          condition: c.type,
          status: c.status,
          reason: c.reason,
          message: c.message,
          // What raised it (core/evidence.ts); absent, and so not logged, where nothing did.
          evidence: c.evidence,
        },
        'condition',
      ),
    );
    this.aggregated = opts.aggregated;
  }

  /** After a reload: the condition types that are now aggregated. */
  setAggregated(types: ReadonlySet<string>): void {
    this.aggregated = types;
  }

  /** `monitor` is the one that reported the status (several may share a source). */
  onStatus(status: Status, monitor: object): void {
    for (const reported of status.conditions) {
      this.owner.set(reported.type, status.source);
      const c = this.aggregated.has(reported.type)
        ? this.aggregator.update(status.source, reported)
        : reported;
      this.changes.record(c);
      for (const outlet of this.outlets.conditions) outlet(c);
    }
    for (const outlet of this.outlets.events) outlet(status.source, status.events);
    for (const outlet of this.outlets.statuses ?? []) outlet(status, monitor);
  }

  /** The last condition of each type. */
  conditions(): IterableIterator<Condition> {
    return this.changes.conditions();
  }

  /**
   * The last conditions the monitor with this source reported: of an aggregated type its own report, not
   * the merge (which may be another owner's reason, or have been reported by another owner last).
   */
  conditionsOf(source: string): Condition[] {
    const own = [...this.changes.conditions()].filter(
      (c) => !this.aggregated.has(c.type) && this.owner.get(c.type) === source,
    );
    return [...own, ...this.aggregator.reportedBy(source).filter((c) => this.aggregated.has(c.type))];
  }
}
