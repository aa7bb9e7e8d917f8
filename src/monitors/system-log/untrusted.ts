import type { Counter, Registry } from 'prom-client';
import type { Logger } from '../../core/logger.ts';
import { SampledWarning } from '../../core/sampled-warning.ts';
import type { LogLine } from '../../core/types.ts';
import type { LogMonitorConfig, LogRuleConfig } from '../../rules/config.ts';
import { type EngineResult, LogRuleEngine } from '../../rules/log-engine.ts';
import { type CompiledPattern, compilePattern } from '../../rules/pattern.ts';
import { untrustedMatches } from '../../rules/untrusted.ts';
import type { ScannedBatch } from '../../sources/source.ts';
import { untrustedEvidence } from './evidence.ts';

export interface UntrustedDeps {
  readonly now: () => number;
  readonly registry: Registry;
  readonly logger?: Logger | undefined;
}

interface Refused {
  readonly rule: LogRuleConfig;
  /** The rule's pattern, recoverPattern and revertPattern: a forged line may match any of them. */
  readonly patterns: readonly CompiledPattern[];
  readonly warning: SampledWarning;
}

/**
 * What a line from an untrusted writer (LogLine.untrusted) may still do: fire a temporary rule of
 * impact info without a frequency window, as a Normal event. It never reaches the monitor's own
 * engine, so it cannot raise or clear a condition, count towards a frequency rule or cancel a count
 * (a forged "Stopping kubelet.service..." would hide a real restart loop), or join a multi-line match.
 * Every other rule it matches counts in npd_log_lines_untrusted_total{source,rule} and is logged,
 * sampled per rule.
 */
export class UntrustedLines {
  private readonly config: LogMonitorConfig;
  private readonly deps: UntrustedDeps;
  private readonly kept: readonly LogRuleConfig[];
  private readonly counter: Counter<'source' | 'rule'>;
  /** Compiled at the first untrusted line: most nodes never see one, and RE2 programs cost memory. */
  private built: { readonly engine: LogRuleEngine; readonly refused: readonly Refused[] } | undefined;

  constructor(config: LogMonitorConfig, deps: UntrustedDeps) {
    this.config = config;
    this.deps = deps;
    // A reason that a refused rule also gives would be classified by that rule's impact downstream.
    this.kept = config.rules.filter((r) =>
      config.rules.every((o) => o.reason !== r.reason || infoOnly(o, config)),
    );
    // The family the quoted-span refusals count in too (rules/untrusted.ts).
    this.counter = untrustedMatches(deps.registry);
    for (const rule of config.rules.filter((r) => !this.kept.includes(r)))
      this.counter.inc({ source: config.source, rule: rule.reason }, 0);
  }

  process(line: LogLine): EngineResult | undefined {
    this.built ??= this.build();
    for (const r of this.built.refused) {
      if (!r.patterns.some((p) => p.test(line.message))) continue;
      this.counter.inc({ source: this.config.source, rule: r.rule.reason });
      r.warning.note(() => ({ why: line.untrusted, line: line.message.slice(0, 200) }));
    }
    return this.built.engine.process(line);
  }

  private build() {
    const { config, deps } = this;
    const rules = this.kept.map((r) => ({ ...r, severity: 'info' as const }));
    const evidence = untrustedEvidence(config);
    const engine = new LogRuleEngine({ ...config, conditions: [], rules }, deps.now(), { evidence });
    const refused = config.rules
      .filter((r) => !this.kept.includes(r))
      .map((rule) => ({ rule, patterns: patternsOf(rule), warning: warningFor(rule, config.source, deps) }));
    return { engine, refused };
  }
}

/** --trust-journal-writers: a journald config takes every entry it selects as evidence (NPD). */
export function withJournalWriters(
  config: LogMonitorConfig,
  trustAll: boolean | undefined,
): LogMonitorConfig {
  return trustAll && config.plugin === 'journald' ? { ...config, trustedWriter: 'any' } : config;
}

/** --trust-file-writers: a filelog config takes every line as evidence (NPD), as `trustedWriter: any`. */
export function withFileWriters(config: LogMonitorConfig, trustAll: boolean | undefined): LogMonitorConfig {
  return trustAll && config.plugin === 'filelog' ? { ...config, trustedWriter: 'any' } : config;
}

/** The lines of a batch split by trust, the shared scan's marks kept with the trusted ones. */
export function splitByTrust(
  lines: readonly LogLine[],
  scanned: ScannedBatch | undefined,
): { lines: readonly LogLine[]; scanned: ScannedBatch | undefined; untrusted: readonly LogLine[] } {
  if (!lines.some((l) => l.untrusted !== undefined)) return { lines, scanned, untrusted: [] };
  const keep = lines.map((l) => l.untrusted === undefined);
  return {
    lines: lines.filter((_, i) => keep[i]),
    scanned: scanned && { scan: scanned.scan, found: scanned.found.filter((_, i) => keep[i]) },
    untrusted: lines.filter((_, i) => !keep[i]),
  };
}

/** A temporary, single-shot rule whose problem is information only, by its own or its file's impact. */
export function infoOnly(rule: LogRuleConfig, file: LogMonitorConfig): boolean {
  return rule.type === 'temporary' && rule.count === undefined && (rule.impact ?? file.impact) === 'info';
}

function patternsOf(rule: LogRuleConfig): CompiledPattern[] {
  const sources = [rule.pattern, rule.recoverPattern, rule.revertPattern];
  return sources.filter((s): s is string => s !== undefined).map(compilePattern);
}

function warningFor(rule: LogRuleConfig, source: string, deps: UntrustedDeps): SampledWarning {
  return new SampledWarning(deps.now, (fields) =>
    deps.logger?.warn(
      { ...fields, source, rule: rule.reason },
      'a line from an untrusted writer matched a rule it may not fire; discarded',
    ),
  );
}
