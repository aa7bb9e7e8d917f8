import type { Evidence } from '../core/evidence.ts';
import type { Condition, ConditionStatus, ProblemEvent, Status } from '../core/types.ts';
import { conditionChangeEvent } from './condition-event.ts';
import { ConditionTable } from './condition-table.ts';
import type { ConditionConfig, RuleType } from './config.ts';
import { withEvidence } from './evidence.ts';
import type { EngineResult, GaugeChange } from './log-engine.ts';

/** NPD's plugin protocol: exit 0 is OK, 1 is NonOK, anything else Unknown. Probes use it too. */
export type ProbeStatus = 'OK' | 'NonOK' | 'Unknown';

export interface ProbeRule {
  readonly type: RuleType;
  readonly condition?: string | undefined;
  readonly reason: string;
}

export interface ProbeResult {
  readonly rule: ProbeRule;
  readonly status: ProbeStatus;
  readonly message: string;
}

export interface ProbeEngineConfig {
  readonly source: string;
  readonly conditions: readonly ConditionConfig[];
  /** NPD's enable_message_change_based_condition_update. */
  readonly messageChangeUpdates?: boolean;
  /** What a problem it raises carries (core/evidence.ts): a built-in probe or a plugin script. */
  readonly evidence?: Evidence | undefined;
}

const TO_CONDITION: Readonly<Record<ProbeStatus, ConditionStatus>> = {
  OK: 'False',
  NonOK: 'True',
  Unknown: 'Unknown',
};

/**
 * The custom-plugin-monitor state machine (npd.md §2.2), shared by plugins and built-in probes. One
 * deliberate difference from NPD: an Unknown result of a temporary rule is not a Warning event (a
 * missing binary must not spam events); the caller counts it as a probe error instead.
 */
export class ProbeRuleEngine {
  private readonly config: ProbeEngineConfig;
  private readonly table: ConditionTable;

  constructor(config: ProbeEngineConfig, startedAt: number) {
    this.config = config;
    this.table = new ConditionTable(config.conditions, startedAt);
  }

  initialStatus(): Status {
    return { source: this.config.source, events: [], conditions: this.conditions() };
  }

  conditions(): Condition[] {
    return this.table.all();
  }

  /** Resumes a condition from the Node after a restart, unless a result already changed it. */
  restore(condition: Condition): void {
    this.table.restore(condition);
  }

  /** Applies one batch of results; like NPD it always re-sends the full condition list. */
  apply(results: readonly ProbeResult[], now: number): EngineResult {
    const events: ProblemEvent[] = [];
    const counted: string[] = [];
    for (const r of results) {
      if (r.rule.type === 'temporary') {
        if (r.status === 'NonOK') {
          const event = {
            severity: 'warn',
            timestamp: now,
            reason: r.rule.reason,
            message: r.message,
          } as const;
          events.push(withEvidence(event, this.config.evidence));
          counted.push(r.rule.reason);
        }
      } else if (r.rule.condition) {
        const change = this.transition(r, r.rule.condition, now);
        if (change) {
          events.push(change);
          if (r.status === 'NonOK') counted.push(r.rule.reason);
        }
      }
    }
    const gauges: GaugeChange[] = this.conditions().map((c) => ({
      type: c.type,
      reason: c.reason,
      active: c.status === 'True',
    }));
    return { status: { source: this.config.source, events, conditions: this.conditions() }, counted, gauges };
  }

  private transition(r: ProbeResult, type: string, now: number): ProblemEvent | undefined {
    const current = this.table.get(type);
    const def = this.table.default(type);
    if (!current || !def) return undefined;
    const status = TO_CONDITION[r.status];
    const next = nextCondition(current, status, r, def, this.config.messageChangeUpdates ?? false);
    if (!next) return undefined;
    // Only a problem carries its evidence; a False or Unknown result raises none.
    const evidence = status === 'True' ? this.config.evidence : undefined;
    const updated: Condition = { type, status, transition: now, reason: next.reason, message: next.message };
    this.table.set(withEvidence(updated, evidence));
    return withEvidence(conditionChangeEvent(type, status, updated.reason, updated.message, now), evidence);
  }
}

function nextCondition(
  current: Condition,
  status: ConditionStatus,
  r: ProbeResult,
  def: ConditionConfig,
  messageChange: boolean,
): { reason: string; message: string } | undefined {
  const fallback = { reason: def.reason, message: status === 'False' ? def.message : r.message };
  if (current.status === 'True' && status !== 'True') return fallback;
  if (current.status !== 'True' && status === 'True') return { reason: r.rule.reason, message: r.message };
  if (current.status !== status) return fallback;
  if (
    status === 'True' &&
    (current.reason !== r.rule.reason || (messageChange && current.message !== r.message))
  ) {
    return { reason: r.rule.reason, message: r.message };
  }
  return undefined;
}
