import type * as ChildProcess from 'node:child_process';
import type { Registry } from 'prom-client';
import { builtin } from '../../core/builtin.ts';
import type { Clock } from '../../core/clock.ts';
import type { Logger } from '../../core/logger.ts';
import type { MonitorHealth, Status } from '../../core/types.ts';
import { watchZombies } from '../../host/procfs/reaper.ts';
import type { ProblemMetrics } from '../../metrics/problem-metrics.ts';
import { ProbeRuleEngine } from '../../rules/probe-engine.ts';
import type { MonitorDeps } from '../deps.ts';
import type { Monitor, MonitorType } from '../monitor.ts';
import { createPluginExecutor, type PluginExecutor, type PluginOutcome } from './exec.ts';
import { PluginMetrics, ruleLabels } from './metrics.ts';
import { PluginScheduler, Semaphore } from './scheduler.ts';
import { customPluginConfigKind, type PluginMonitorConfig, type PluginRuleConfig } from './schema.ts';

export interface CustomPluginDeps {
  readonly clock: Clock;
  readonly logger: Logger;
  readonly registry: Registry;
  readonly problemMetrics: ProblemMetrics;
  readonly executor: PluginExecutor;
  /** Uniform in [0, 1), for splay. */
  readonly random: () => number;
}

/**
 * NPD's custom-plugin-monitor: runs executables on a schedule and turns their exit codes and stdout into
 * conditions and events through the shared probe state machine. Every result is published on its own,
 * with the full condition list, as NPD does.
 */
export class CustomPluginMonitor implements Monitor {
  readonly source: string;
  private readonly config: PluginMonitorConfig;
  private readonly deps: CustomPluginDeps;
  private readonly logger: Logger;
  private readonly engine: ProbeRuleEngine;
  private readonly metrics: PluginMetrics;
  private readonly labels: readonly string[];
  /** The last start failure logged per rule, so a missing binary is logged once, not every interval. */
  private readonly startErrors = new Map<number, string>();
  private readonly inflight = new Set<Promise<void>>();
  private semaphore: Semaphore | undefined;
  private scheduler: PluginScheduler | undefined;
  private abort: AbortController | undefined;
  private emit: ((s: Status) => void) | undefined;

  constructor(config: PluginMonitorConfig, deps: CustomPluginDeps) {
    this.source = config.source;
    this.config = config;
    this.deps = deps;
    this.logger = deps.logger.child({ source: config.source, monitor: 'custom-plugin' });
    this.engine = new ProbeRuleEngine(
      {
        source: config.source,
        conditions: config.conditions,
        messageChangeUpdates: config.messageChangeUpdates,
        evidence: { source: config.source, plugin: 'custom', trust: 'plugin' },
      },
      deps.clock.now(),
    );
    this.labels = ruleLabels(config.rules);
    this.metrics = new PluginMetrics(deps.registry, config.source, this.labels);
    if (config.metricsReporting) deps.problemMetrics.initialise(config.rules);
  }

  async start(emit: (status: Status) => void): Promise<void> {
    if (this.emit) return;
    this.emit = emit;
    // skip_initial_status keeps whatever the Node shows until the first real result (issue #304).
    if (!this.config.skipInitialStatus) emit(this.engine.initialStatus());
    this.abort = new AbortController();
    this.semaphore = new Semaphore(this.config.concurrency);
    this.scheduler = new PluginScheduler({
      clock: this.deps.clock,
      random: this.deps.random,
      splayMs: this.config.splayMs,
      groups: PluginScheduler.group(this.config.rules.map((r) => r.invokeIntervalMs)),
      runBatch: (rules) => this.track(this.runBatch(rules)),
    });
    void this.scheduler.start();
  }

  async stop(): Promise<void> {
    if (!this.emit) return;
    this.emit = undefined;
    this.scheduler?.stop();
    this.semaphore?.close();
    this.abort?.abort();
    // Bounded: an aborted run ends once its group is killed, or after the executor's kill grace.
    await Promise.allSettled([...this.inflight]);
  }

  health(): MonitorHealth {
    // A failing plugin is the plugin's problem, reported as its condition and in npd_plugin_errors_total;
    // it must not fail /healthz and get the whole agent restarted.
    return this.emit ? { up: true, healthy: true } : { up: false, healthy: false, detail: 'not started' };
  }

  /** Exposed for restoring state from the Node after a restart. */
  get rules(): ProbeRuleEngine {
    return this.engine;
  }

  private track(batch: Promise<void>): Promise<void> {
    this.inflight.add(batch);
    return batch.finally(() => this.inflight.delete(batch));
  }

  private async runBatch(indices: readonly number[]): Promise<void> {
    const semaphore = this.semaphore;
    const runs: Promise<void>[] = [];
    for (const i of indices) {
      if (!semaphore || !this.emit) break;
      const release = await semaphore.acquire();
      if (!this.emit) {
        release();
        break;
      }
      runs.push(
        this.runRule(i)
          .catch((err: unknown) => this.internalError(err, i))
          .finally(release),
      );
    }
    await Promise.all(runs);
  }

  private async runRule(i: number): Promise<void> {
    const rule = this.config.rules[i];
    if (!rule) return;
    const outcome = await this.execute(rule);
    if (!this.emit || outcome === undefined || outcome.failure === 'aborted') return;
    const label = this.labels[i] ?? rule.reason;
    this.metrics.record(label, outcome);
    this.report(i, rule, outcome);
    // A temporary rule's Unknown is not an event (see ProbeRuleEngine); it is counted here instead.
    if (rule.type === 'temporary' && outcome.status === 'Unknown' && outcome.failure !== 'start') {
      this.metrics.error('unknown');
    }
    const result = this.engine.apply(
      [{ rule, status: outcome.status, message: outcome.message }],
      this.deps.clock.now(),
    );
    if (this.config.metricsReporting) this.deps.problemMetrics.apply(result);
    this.emit(result.status);
  }

  /** A bug or a throwing emit loses this one result; the schedule and the agent carry on. */
  private internalError(err: unknown, i: number): void {
    this.metrics.error('internal');
    this.logger.error(
      { err: (err as Error).message, path: this.config.rules[i]?.path },
      'plugin result not processed',
    );
  }

  private async execute(rule: PluginRuleConfig): Promise<PluginOutcome | undefined> {
    const command = {
      path: rule.path,
      command: rule.command,
      args: rule.args,
      timeoutMs: rule.timeoutMs,
      maxOutputLength: this.config.maxOutputLength,
    };
    try {
      return await this.deps.executor(command, this.abort?.signal);
    } catch (err) {
      // The executor is not supposed to reject; if it does, this run is lost but the schedule goes on.
      this.internalError(err, this.config.rules.indexOf(rule));
      return undefined;
    }
  }

  private report(i: number, rule: PluginRuleConfig, o: PluginOutcome): void {
    const fields = { path: rule.path, reason: rule.reason, status: o.status, state: o.state };
    if (o.failure === 'start') {
      const err = o.error ?? 'unknown error';
      if (this.startErrors.get(i) !== err) this.logger.error({ ...fields, err }, 'error in starting plugin');
      this.startErrors.set(i, err);
      return;
    }
    if (this.startErrors.delete(i)) this.logger.info(fields, 'plugin starts again');
    if (o.failure === 'timeout') {
      this.logger.warn(
        { ...fields, timeoutMs: rule.timeoutMs, stderr: o.stderr },
        'plugin timed out; killed its process group',
      );
    }
    if (o.abandoned)
      this.logger.error(fields, 'plugin process group survived SIGKILL; stopped waiting for it');
    this.logger.debug({ ...fields, message: o.message, stderr: o.stderr, ms: o.durationMs }, 'plugin result');
  }
}

export const customPluginMonitorType: MonitorType<PluginMonitorConfig> = {
  configKind: customPluginConfigKind,
  create(config, deps: MonitorDeps) {
    watchZombies({ registry: deps.registry, logger: deps.logger, pid: process.pid });
    const executor = createPluginExecutor({
      spawn: (...args: Parameters<typeof ChildProcess.spawn>) =>
        builtin<typeof ChildProcess>('node:child_process').spawn(...args),
      kill: (pid, signal) => process.kill(pid, signal),
      clock: deps.clock,
    });
    return new CustomPluginMonitor(config, { ...deps, executor, random: Math.random });
  },
};
