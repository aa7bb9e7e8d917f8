import type { Registry } from 'prom-client';
import { publishedConditions } from '../conditions/extra.ts';
import { allConditionTypes, checkOwners } from '../conditions/owners.ts';
import type { StartupPlan } from '../conditions/ownership.ts';
import { ConfigError, formatIssue } from '../config/errors.ts';
import type { LoadedConfig } from '../config/load.ts';
import { ConfigWatcher } from '../config/watch.ts';
import type { Clock } from '../core/clock.ts';
import type { Logger } from '../core/logger.ts';
import type { Condition, Status } from '../core/types.ts';
import { XidOnce, xidOnceOutlet } from '../events/xid-once.ts';
import type { MallocTrimResult } from '../host/clib/malloc-trim.ts';
import { readBootId } from '../host/procfs/boot-id.ts';
import { registerBuildInfo } from '../metrics/build-info.ts';
import { ConditionProblemGauge } from '../metrics/condition-problem.ts';
import { type ProcessInfo, registerProcessMetrics } from '../metrics/process-metrics.ts';
import type { MonitorDeps } from '../monitors/deps.ts';
import type { Monitor, MonitorType } from '../monitors/monitor.ts';
import { MonitorSupervisor } from '../monitors/supervisor.ts';
import { type Endpoints, HttpServers } from '../server/http.ts';
import { reportPreviousCrash } from './crash-report.ts';
import { ProblemDetector, type ProblemOutlets } from './detector.ts';
import { createExporter, type Exporter } from './exporter.ts';
import { HeapTrimmer } from './heap-trim.ts';
import { startErrorOf } from './listen-error.ts';
import { monitorDeps } from './monitor-deps.ts';
import type { Options } from './options.ts';
import { liveness, readiness } from './readiness.ts';
import { endedAtBoot } from './reboot.ts';
import { applyReload, planReload, type ReloadTarget, type RunningMonitor } from './reload.ts';
import { reloadMetrics } from './reload-metrics.ts';
import { logStartupSummary, waitingMonitors } from './startup-summary.ts';
import { createSubsystems, type Subsystems } from './subsystems.ts';

export interface AgentDeps {
  readonly options: Options;
  readonly configs: readonly LoadedConfig[];
  readonly types: readonly MonitorType[];
  readonly clock: Clock;
  readonly registry: Registry;
  readonly logger: Logger;
  readonly version: string;
  /** The commit the bundle was built from; "unknown" from source. */
  readonly commit?: string;
  /** Where process_* metrics are read; this process's /proc/self by default. */
  readonly processInfo?: ProcessInfo;
  /** Loads and validates the config files again; throws ConfigError. Enables hot reload. */
  readonly reload?: {
    readonly files: readonly string[];
    readonly load: () => LoadedConfig[];
    readonly intervalMs: number;
  };
  /** Returns freed allocator memory after start-up and reloads (libcMallocTrim); none in tests. */
  readonly mallocTrim?: () => Promise<MallocTrimResult>;
}

/**
 * The composition root: monitors feed statuses one way into the condition manager and the event
 * pipeline, while the HTTP servers report health, conditions and metrics.
 */
export class Agent {
  private readonly deps: AgentDeps;
  private readonly servers = new HttpServers();
  private readonly publishes: (type: string) => boolean;
  private running: RunningMonitor[] = [];
  private monitorDeps: MonitorDeps | undefined;
  private supervisor: MonitorSupervisor | undefined;
  private exporter: Exporter | undefined;
  private detector: ProblemDetector | undefined;
  private watcher: ConfigWatcher | undefined;
  private reloads: ReturnType<typeof reloadMetrics> | undefined;
  private subsystems: Subsystems | undefined;
  private trimmer: HeapTrimmer | undefined;
  private bootId: string | undefined;
  /** npd_condition_problem: every condition, published or not, in one polarity. */
  private readonly conditionProblems: ConditionProblemGauge;

  constructor(deps: AgentDeps) {
    this.deps = deps;
    this.publishes = publishedConditions(deps.options.extraConditions);
    this.conditionProblems = new ConditionProblemGauge(deps.registry);
  }

  async start(): Promise<void> {
    const { clock, registry, logger } = this.deps;
    registerProcessMetrics(registry, this.deps.processInfo);
    registerBuildInfo(registry, { version: this.deps.version, commit: this.deps.commit ?? 'unknown' });
    this.createMonitors();
    this.subsystems = createSubsystems(this.deps, (c) => {
      this.conditionProblems.observe(c);
      this.exporter?.conditions.update(c);
    });
    const exporter = await this.startExporter();
    const detector = this.detect(exporter);
    this.supervisor = new MonitorSupervisor(
      this.running.map((r) => r.monitor),
      { clock, logger, registry },
    );
    await this.listen();
    this.subsystems?.reporter.start();
    await this.supervisor.start((status, from) => detector.onStatus(status, from));
    const crash = { hostRoot: this.deps.options.hostRoot, bootId: this.bootId, clock, registry, logger };
    void reportPreviousCrash(crash, (s) => detector.onStatus(s, crash));
    this.watchConfig();
    this.trimHeap();
    const o = this.deps.options;
    logStartupSummary(logger, {
      version: this.deps.version,
      mode: exporter.mode,
      node: o.nodeName,
      monitors: this.running.map((r) => r.monitor.source),
      conditions: detector.conditions(),
      kmsg: this.monitorDeps?.sources?.positions() ?? [],
      waiting: waitingMonitors(this.running.map((r) => r.monitor)),
      listen: [
        { name: 'status', address: o.address, port: o.port },
        { name: 'metrics', address: o.prometheusAddress, port: o.prometheusPort },
      ],
    });
  }

  async stop(graceMs: number): Promise<void> {
    this.watcher?.stop();
    this.trimmer?.stop();
    this.subsystems?.reporter.stop();
    await this.supervisor?.stop();
    await this.exporter?.stop(graceMs);
    await this.servers.close();
  }

  /**
   * Applies a changed configuration, or keeps the running one and reports why not. All or nothing:
   * any failure, while loading or while building the new monitors, is a rejected reload.
   */
  async reload(): Promise<boolean> {
    const { logger } = this.deps;
    try {
      const next = this.deps.reload?.load() ?? [];
      const { issues, aggregated } = checkOwners(next);
      if (issues.length > 0) throw new ConfigError(issues);
      this.running = await applyReload(planReload(this.running, next), this.reloadTarget());
      this.exporter?.events.declare(this.running.map((r) => r.monitor.source));
      this.detector?.setAggregated(aggregated);
      this.subsystems?.configure(next);
      this.conditionProblems.retain([...allConditionTypes(next), ...(this.subsystems?.types() ?? [])]);
      this.exporter?.setConditionTypes?.(this.ownedTypes(next));
    } catch (err) {
      const issues = err instanceof ConfigError ? err.issues.map(formatIssue) : [String(err)];
      for (const issue of issues)
        logger.error({ issue }, 'config reload rejected; keeping the running config');
      this.reloads?.result(false);
      return false;
    }
    this.reloads?.result(true);
    this.trimmer?.schedule();
    logger.info({ monitors: this.running.map((r) => r.monitor.source) }, 'config reloaded');
    return true;
  }

  private trimHeap(): void {
    const { mallocTrim: load, clock, registry, logger } = this.deps;
    if (!load) return;
    this.trimmer = new HeapTrimmer({ clock, registry, logger, load });
    this.trimmer.schedule();
  }

  private reloadTarget(): ReloadTarget {
    const supervisor = this.supervisor as MonitorSupervisor;
    return {
      create: (loaded) => this.create(loaded),
      add: (monitor) => supervisor.add(monitor),
      remove: (monitor) => {
        this.subsystems?.reporter.forget(monitor);
        return supervisor.remove(monitor);
      },
      conditionsOf: (monitor) => this.conditionsOf(monitor),
      reconfigureFailed: (monitor, err) => {
        this.deps.logger.warn(
          { source: monitor.source, err: String(err) },
          'in-place reconfigure failed; restarting the monitor with the new config',
        );
        this.reloads?.reconfigureFailed();
      },
    };
  }

  private conditionsOf(monitor: Monitor): Condition[] {
    return this.detector?.conditionsOf(monitor.source) ?? [];
  }

  private resume(plan: StartupPlan): void {
    endedAtBoot(plan, this.deps);
    for (const r of this.running) r.monitor.restore?.(plan.restore);
    this.subsystems?.reporter.restore(plan.restore);
  }

  /** The problem condition types of the configs, plus the subsystem ones when they are on. */
  private ownedTypes(configs: readonly LoadedConfig[]): string[] {
    const published = allConditionTypes(configs).filter(this.publishes);
    return [...published, ...(this.subsystems?.types() ?? [])];
  }

  private createMonitors(): void {
    const { options, clock, registry, logger, configs } = this.deps;
    // Late-bound: the exporter is created after the monitors and learns the Node after that.
    const node = (resource: string) => this.exporter?.nodeCapacity?.(resource);
    this.monitorDeps = monitorDeps(options, clock, registry, logger, node);
    this.running = configs.map((loaded) => ({ loaded, monitor: this.create(loaded) }));
  }

  private async startExporter(): Promise<Exporter> {
    const { options, clock, registry, logger, configs } = this.deps;
    this.bootId = await readBootId(options.hostProc);
    const exporter = await createExporter({
      options,
      clock,
      registry,
      logger,
      version: this.deps.version,
      conditionTypes: this.ownedTypes(configs),
      publishes: this.publishes,
      bootId: this.bootId,
      onStartup: (plan) => this.resume(plan),
    });
    this.exporter = exporter;
    exporter.events.declare(this.running.map((r) => r.monitor.source));
    return exporter;
  }

  /** Monitors' statuses go through the detector to the exporter's conditions, taints and events. */
  private detect(exporter: Exporter): ProblemDetector {
    const conditions = [(c: Condition) => exporter.conditions.update(c), this.conditionProblems.observe];
    const taints = exporter.taints;
    if (taints) conditions.push((c) => taints.observe(c));
    this.detector = new ProblemDetector({
      logger: this.deps.logger,
      aggregated: checkOwners(this.deps.configs).aggregated,
      outlets: {
        conditions,
        events: this.eventOutlets(exporter),
        statuses: this.subsystems ? [(s: Status, m: object) => this.subsystems?.reporter.observe(s, m)] : [],
      },
    });
    return this.detector;
  }

  private eventOutlets(exporter: Exporter): ProblemOutlets['events'] {
    const outlets: ProblemOutlets['events'][number][] = [(s, e) => exporter.events.dispatch(s, e)];
    const diagnostics = exporter.diagnostics;
    if (diagnostics) outlets.unshift((s, e) => diagnostics.events.observe(s, e));
    // One event per Xid, whether the kernel log or NVML reported it first (events/xid-once.ts).
    return [xidOnceOutlet(new XidOnce({ clock: this.deps.clock, registry: this.deps.registry }), outlets)];
  }

  private async listen(): Promise<void> {
    const { options } = this.deps;
    await this.servers
      .listen(
        this.endpoints(),
        { address: options.address, port: options.port },
        { address: options.prometheusAddress, port: options.prometheusPort },
      )
      .catch((err: unknown) => {
        throw startErrorOf(err);
      });
  }

  private create(loaded: LoadedConfig): Monitor {
    const type = this.deps.types.find((t) => t.configKind.kind === loaded.kind);
    if (!type) throw new Error(`${loaded.file}: no monitor type for ${loaded.kind}`);
    return type.create(loaded.config, this.monitorDeps as MonitorDeps);
  }

  private watchConfig(): void {
    const reload = this.deps.reload;
    if (!reload) return;
    this.reloads = reloadMetrics(this.deps.registry);
    this.watcher = new ConfigWatcher({
      files: reload.files,
      clock: this.deps.clock,
      intervalMs: reload.intervalMs,
      onChange: () => void this.reload(),
    });
    this.watcher.start();
  }

  private endpoints(): Endpoints {
    return {
      registry: this.deps.registry,
      health: () =>
        liveness(this.supervisor?.liveness() ?? { ok: false, detail: 'starting\n' }, this.exporter),
      ready: () => readiness(this.exporter, this.deps.options.updateNodeConditions),
      conditions: () => this.exporter?.conditions.conditions() ?? [],
    };
  }
}
