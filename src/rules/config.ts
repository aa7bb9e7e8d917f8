/**
 * The validated, normalised configuration that the rest of the agent consumes. Durations are
 * milliseconds. Objects are frozen after validation.
 */
import type { HealthTag, Severity } from '../core/types.ts';

export interface ConditionConfig {
  readonly type: string;
  readonly reason: string;
  readonly message: string;
  /** Returns a True condition to its default after this long without a matching line. */
  readonly clearAfterMs?: number | undefined;
  /** Another config may report this type too; the worst status wins. */
  readonly aggregate?: boolean | undefined;
}

export type RuleType = 'temporary' | 'permanent';

export interface LogRuleConfig extends HealthTag {
  readonly type: RuleType;
  readonly condition?: string | undefined;
  readonly reason: string;
  readonly pattern: string;
  readonly patternGeneratedMessageSuffix?: string | undefined;
  /** Replaces the matched text as the message; `$1`/`${name}` expand capture groups, as in `reason`. */
  readonly message?: string | undefined;
  /** A line matching this returns the rule's condition to its default (permanent rules). */
  readonly recoverPattern?: string | undefined;
  /** Frequency rule: fire only after `count` matches within `windowMs` (NPD's log-counter). */
  readonly count?: number | undefined;
  readonly windowMs?: number | undefined;
  /** Frequency rule: each match cancels one earlier match, like log-counter's --revert-pattern. */
  readonly revertPattern?: string | undefined;
  /** A temporary rule's event type: warn (NPD's, the default) or info (a Normal event). */
  readonly severity?: Severity | undefined;
  /**
   * A temporary rule's problem that this condition type holds (the same line's permanent rule, or a
   * probe reading the state): while any monitor reports the type, the condition decides the subsystem
   * condition and the event does not count in --subsystem-window (docs/rules.md).
   */
  readonly heldBy?: string | undefined;
  /**
   * What a match of this rule is an occurrence of, where another source can report the same one: `xid`,
   * an NVIDIA Xid line, whose code and GPU the monitor reads (monitors/system-log/xid-occurrence.ts) so
   * the event pipeline passes one event per Xid, whether the kernel log or NVML saw it first.
   */
  readonly occurrence?: 'xid' | undefined;
}

export type LogPlugin = 'kmsg' | 'journald' | 'filelog';

/**
 * Which journal entries may count as evidence (docs/rules.md, "Who wrote a journal entry"): `system`
 * (the default) trusts root and system services, `any` every entry the match selects (NPD), and a
 * field map every entry whose journald-set fields (`_UID`, `_SYSTEMD_UNIT`, ...) each equal one of
 * the listed values.
 */
export type TrustedWriter = 'system' | 'any' | Readonly<Record<string, readonly string[]>>;

export interface LogMonitorConfig extends HealthTag {
  readonly kind: 'system-log';
  /** The file the config came from, for errors and logs. */
  readonly file: string;
  readonly plugin: LogPlugin;
  readonly pluginConfig: Readonly<Record<string, string>>;
  readonly logPath: string;
  readonly lookbackMs: number;
  readonly delayMs: number;
  readonly skipList: readonly string[];
  readonly bufferSize: number;
  readonly source: string;
  /**
   * journald: set by the schema for every journald config, absent means every entry. filelog: `any`
   * or absent, which means no line is evidence (monitors/system-log/file-writers.ts).
   */
  readonly trustedWriter?: TrustedWriter | undefined;
  readonly metricsReporting: boolean;
  readonly conditions: readonly ConditionConfig[];
  readonly rules: readonly LogRuleConfig[];
}
