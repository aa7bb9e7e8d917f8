import type { Counter, Registry } from 'prom-client';
import type { Clock, TimerHandle } from '../../core/clock.ts';
import type { Logger } from '../../core/logger.ts';
import { notAfter } from '../../core/not-after.ts';
import type { Condition, LogLine, MonitorHealth, Status } from '../../core/types.ts';
import type { ProblemMetrics } from '../../metrics/problem-metrics.ts';
import type { LogMonitorConfig } from '../../rules/config.ts';
import { type EngineResult, LogRuleEngine } from '../../rules/log-engine.ts';
import { sourceCounter } from '../../sources/metrics.ts';
import type { LogSource, ScannedBatch } from '../../sources/source.ts';
import type { Monitor } from '../monitor.ts';
import { lineEvidence } from './evidence.ts';
import { ANY_FILE_WRITER, anyFileWriter, warnUntrustedFile } from './file-writers.ts';
import { QuotedMatches, quotedClassifier } from './quoted-matches.ts';
import { infoOnly, splitByTrust, UntrustedLines, withFileWriters, withJournalWriters } from './untrusted.ts';
import { XidOccurrences } from './xid-occurrence.ts';

export interface SystemLogMonitorDeps {
  readonly clock: Clock;
  readonly registry: Registry;
  readonly problemMetrics: ProblemMetrics;
  readonly logger?: Logger | undefined;
  /** --trust-quoted-text: quoted text is evidence, as in NPD (quoted-matches.ts). */
  readonly trustQuotedText?: boolean | undefined;
  /** --trust-journal-writers: a journald config's trustedWriter is `any` (untrusted.ts). */
  readonly trustJournalWriters?: boolean | undefined;
  /** --trust-file-writers: a filelog config's trustedWriter is `any` (file-writers.ts). */
  readonly trustFileWriters?: boolean | undefined;
}

const TICK_MS = 1000;

/**
 * NPD's system-log-monitor: one log source feeding one rule engine. The source owns reading and
 * reopening; this class owns matching, skip lists, recovery ticks and problem metrics.
 */
export class SystemLogMonitor implements Monitor {
  readonly source: string;
  private config: LogMonitorConfig;
  private readonly logSource: LogSource;
  private readonly deps: SystemLogMonitorDeps;
  private engine: LogRuleEngine;
  /** Lines whose writer the config does not trust: at most info events (untrusted.ts). */
  private untrusted: UntrustedLines | undefined;
  private readonly evaluated: Counter.Internal;
  private readonly skipped: Counter.Internal;
  private readonly evalSeconds: Counter.Internal;
  private readonly setFallbacks: Counter.Internal;
  private readonly future: Counter.Internal;
  private readonly quotedMatches: QuotedMatches;
  /** The Xid occurrences of rules marked `occurrence: xid`, and the GPUs' UUIDs read so far. */
  private readonly xids: XidOccurrences;
  /** The engine's fallback count already exported (a new engine starts from 0). */
  private exportedFallbacks = 0;
  private emit: ((s: Status) => void) | undefined;
  private ticker: TimerHandle | undefined;

  constructor(config: LogMonitorConfig, logSource: LogSource, deps: SystemLogMonitorDeps) {
    this.source = config.source;
    this.config = config;
    this.logSource = logSource;
    this.deps = deps;
    this.xids = new XidOccurrences(config.source, config.plugin, deps.registry);
    this.engine = this.newEngine(config);
    this.untrusted = this.checksWriters(config) ? this.untrustedLines(config) : undefined;
    const bySource = (name: string, help: string) => sourceCounter(deps.registry, config.source, name, help);
    this.evaluated = bySource('npd_log_lines_evaluated_total', 'Log lines run through the rules.');
    this.skipped = bySource('npd_log_lines_skipped_total', 'Log lines dropped by skipList before matching.');
    this.evalSeconds = bySource(
      'npd_rule_evaluation_seconds_total',
      'Time spent matching log lines against rules.',
    );
    this.setFallbacks = bySource(
      'npd_rule_set_fallbacks_total',
      'Log lines matched rule by rule because RE2 would not build or run the combined rule set.',
    );
    this.future = bySource(
      'npd_log_lines_future_timestamp_total',
      'Log lines stamped later than the agent clock; they count from when they were read.',
    );
    if (config.metricsReporting) deps.problemMetrics.initialise(config.rules);
    warnUntrustedFile(config, deps.logger);
    const now = () => deps.clock.now();
    // Only the kmsg and journald sources mark quoted text; a file's lines carry none. The series of
    // the rules whose refusal matters start at 0, as the untrusted writers' do (untrusted.ts).
    const refusable = config.rules.filter((r) => !infoOnly(r, config)).map((r) => r.reason);
    const quotedRules = config.plugin === 'filelog' ? [] : refusable;
    this.quotedMatches = new QuotedMatches(config.source, quotedRules, {
      registry: deps.registry,
      now,
      logger: deps.logger,
    });
  }

  async start(emit: (status: Status) => void): Promise<void> {
    this.emit = emit;
    emit(this.engine.initialStatus());
    this.logSource.start((lines, scanned) => this.onLines(lines, scanned), this.engine.literals());
    if (this.needsTicks()) this.scheduleTick();
  }

  async stop(): Promise<void> {
    this.emit = undefined;
    this.ticker?.cancel();
    this.ticker = undefined;
    await this.logSource.stop();
  }

  health(): MonitorHealth {
    return this.logSource.health();
  }

  /**
   * Applies new rules without reopening the source, so the read position survives a reload. Returns
   * false when what is read changed (plugin, path, filters), which needs a new monitor.
   */
  reconfigure(reloaded: LogMonitorConfig): boolean {
    const { trustJournalWriters, trustFileWriters } = this.deps;
    const next = withFileWriters(withJournalWriters(reloaded, trustJournalWriters), trustFileWriters);
    if (!sameSource(this.config, next)) return false;
    warnUntrustedFile(next, this.deps.logger);
    const previous = this.engine.conditions();
    this.config = next;
    this.engine = this.newEngine(next);
    this.untrusted = this.checksWriters(next) ? this.untrustedLines(next) : undefined;
    this.exportedFallbacks = 0;
    this.logSource.retune?.(this.engine.literals());
    for (const c of previous) if (c.status !== 'False') this.engine.restore(c, { force: true });
    if (next.metricsReporting) this.deps.problemMetrics.initialise(next.rules);
    this.emit?.(this.engine.initialStatus());
    return true;
  }

  restore(conditions: readonly Condition[]): void {
    for (const c of conditions) this.engine.restore(c);
    this.emit?.(this.engine.initialStatus());
  }

  private onLines(read: readonly LogLine[], scanned?: ScannedBatch): void {
    const started = process.hrtime.bigint();
    const lines = this.notAfterNow(read);
    const kept = this.config.skipList.length > 0 ? this.withoutSkipped(lines, scanned) : { lines, scanned };
    const batch = this.byTrust(kept.lines, kept.scanned);
    this.xids.observe(batch.lines);
    if (batch.scanned) {
      const { found, scan } = batch.scanned;
      for (const result of this.engine.processScanned(batch.lines, found, scan)) this.publish(result);
    } else {
      for (const line of batch.lines) {
        const result = this.engine.process(line);
        if (result) this.publish(result);
      }
    }
    for (const line of batch.untrusted) {
      this.untrusted ??= this.untrustedLines(this.config);
      const result = this.untrusted.process(line);
      if (result) this.publish(result);
    }
    this.evalSeconds.inc(Number(process.hrtime.bigint() - started) / 1e9);
    const fallbacks = this.engine.setFallbacks();
    if (fallbacks > this.exportedFallbacks) this.setFallbacks.inc(fallbacks - this.exportedFallbacks);
    this.exportedFallbacks = fallbacks;
    this.evaluated.inc(kept.lines.length);
    const skipped = lines.length - kept.lines.length;
    if (skipped > 0) this.skipped.inc(skipped);
  }

  /**
   * A line stamped later than now (a wrong clock, a forged syslog line) counts from when it was read,
   * so frequency windows and clearAfter cannot wait for its date: one line stamped 2035 must not hold
   * a condition, and the subsystem condition behind it, until 2035.
   */
  private notAfterNow(lines: readonly LogLine[]): readonly LogLine[] {
    return notAfter(lines, this.deps.clock.now(), () => this.future.inc());
  }

  /** NPD's skipList: lines holding any of its strings never reach the rules. */
  private withoutSkipped(lines: readonly LogLine[], scanned: ScannedBatch | undefined) {
    const keep = lines.map((l) => !this.config.skipList.some((s) => l.message.includes(s)));
    return {
      lines: lines.filter((_, i) => keep[i]),
      scanned: scanned && { scan: scanned.scan, found: scanned.found.filter((_, i) => keep[i]) },
    };
  }

  private publish(result: EngineResult): void {
    if (result.untrusted) this.quotedMatches.note(result);
    // A step that only discarded matches changed nothing to publish.
    if (result.status.events.length === 0 && result.gauges.length === 0) return;
    if (this.config.metricsReporting) this.deps.problemMetrics.apply(result);
    this.emit?.(result.status);
  }

  /** The batch split by its writers' trust; a log file's lines have none it trusts (file-writers.ts). */
  private byTrust(lines: readonly LogLine[], scanned: ScannedBatch | undefined) {
    if (!anyFileWriter(this.config)) return splitByTrust(lines, scanned);
    return {
      lines: [],
      scanned: undefined,
      untrusted: lines.map((l) => ({ ...l, untrusted: ANY_FILE_WRITER })),
    };
  }

  /** Whether the source may mark lines untrusted: then the refusal series exist from the start. */
  private checksWriters(config: LogMonitorConfig): boolean {
    if (anyFileWriter(config)) return true;
    return config.trustedWriter !== undefined && config.trustedWriter !== 'any';
  }

  private newEngine(config: LogMonitorConfig): LogRuleEngine {
    const quotedSpans = quotedClassifier(config.plugin, this.deps.trustQuotedText);
    const evidence = lineEvidence(config, this.deps);
    this.xids.declare(config.rules);
    const context = { quotedSpans, evidence, occurrences: this.xids };
    return new LogRuleEngine(config, this.deps.clock.now(), context);
  }

  private untrustedLines(config: LogMonitorConfig): UntrustedLines {
    const { clock, registry, logger } = this.deps;
    return new UntrustedLines(config, { now: () => clock.now(), registry, logger });
  }

  private needsTicks(): boolean {
    return (
      this.config.conditions.some((c) => c.clearAfterMs !== undefined) ||
      this.config.rules.some((r) => r.windowMs !== undefined && r.type === 'permanent')
    );
  }

  private scheduleTick(): void {
    this.ticker = this.deps.clock.setTimeout(() => {
      const result = this.engine.tick(this.deps.clock.now());
      if (result) this.publish(result);
      if (this.emit) this.scheduleTick();
    }, TICK_MS);
  }
}

function sameSource(a: LogMonitorConfig, b: LogMonitorConfig): boolean {
  return (
    a.plugin === b.plugin &&
    a.logPath === b.logPath &&
    a.source === b.source &&
    a.lookbackMs === b.lookbackMs &&
    a.delayMs === b.delayMs &&
    JSON.stringify(a.trustedWriter) === JSON.stringify(b.trustedWriter) &&
    JSON.stringify(a.pluginConfig) === JSON.stringify(b.pluginConfig)
  );
}
