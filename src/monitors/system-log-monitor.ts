import type { Counter, Registry } from 'prom-client';
import type { LogMonitorConfig } from '../config/types.ts';
import type { ProblemMetrics } from '../metrics/problem-metrics.ts';
import { counter } from '../metrics/registry.ts';
import { type EngineResult, LogRuleEngine } from '../rules/log-engine.ts';
import type { Condition, LogLine, Status } from '../types.ts';
import type { Clock, TimerHandle } from '../util/clock.ts';
import type { LogSource } from './log-source.ts';
import type { Monitor, MonitorHealth } from './monitor.ts';

export interface SystemLogMonitorDeps {
  readonly clock: Clock;
  readonly registry: Registry;
  readonly problemMetrics: ProblemMetrics;
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
  private readonly evaluated: Counter<'source'>;
  private readonly skipped: Counter<'source'>;
  private readonly evalSeconds: Counter<'source'>;
  private emit: ((s: Status) => void) | undefined;
  private ticker: TimerHandle | undefined;

  constructor(config: LogMonitorConfig, logSource: LogSource, deps: SystemLogMonitorDeps) {
    this.source = config.source;
    this.config = config;
    this.logSource = logSource;
    this.deps = deps;
    this.engine = new LogRuleEngine(config, deps.clock.now());
    const labelNames = ['source'] as const;
    this.evaluated = counter(deps.registry, {
      name: 'npd_log_lines_evaluated_total',
      help: 'Log lines run through the rules.',
      labelNames,
    });
    this.skipped = counter(deps.registry, {
      name: 'npd_log_lines_skipped_total',
      help: 'Log lines dropped by skipList before matching.',
      labelNames,
    });
    this.evalSeconds = counter(deps.registry, {
      name: 'npd_rule_evaluation_seconds_total',
      help: 'Time spent matching log lines against rules.',
      labelNames,
    });
    if (config.metricsReporting) deps.problemMetrics.initialise(config.rules);
  }

  async start(emit: (status: Status) => void): Promise<void> {
    this.emit = emit;
    emit(this.engine.initialStatus());
    this.logSource.start((lines) => this.onLines(lines));
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
  reconfigure(next: LogMonitorConfig): boolean {
    if (!sameSource(this.config, next)) return false;
    const previous = this.engine.conditions();
    this.config = next;
    this.engine = new LogRuleEngine(next, this.deps.clock.now());
    for (const c of previous) if (c.status !== 'False') this.engine.restore(c, { force: true });
    if (next.metricsReporting) this.deps.problemMetrics.initialise(next.rules);
    this.emit?.(this.engine.initialStatus());
    return true;
  }

  restore(conditions: readonly Condition[]): void {
    for (const c of conditions) this.engine.restore(c);
    this.emit?.(this.engine.initialStatus());
  }

  private onLines(lines: readonly LogLine[]): void {
    const started = process.hrtime.bigint();
    let skipped = 0;
    for (const line of lines) {
      if (this.config.skipList.some((s) => line.message.includes(s))) {
        skipped++;
        continue;
      }
      const result = this.engine.process(line);
      if (result) this.publish(result);
    }
    const seconds = Number(process.hrtime.bigint() - started) / 1e9;
    this.evalSeconds.inc({ source: this.source }, seconds);
    this.evaluated.inc({ source: this.source }, lines.length - skipped);
    if (skipped > 0) this.skipped.inc({ source: this.source }, skipped);
  }

  private publish(result: EngineResult): void {
    if (this.config.metricsReporting) this.deps.problemMetrics.apply(result);
    this.emit?.(result.status);
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
    JSON.stringify(a.pluginConfig) === JSON.stringify(b.pluginConfig)
  );
}
