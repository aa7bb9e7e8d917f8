import type { Counter, Registry } from 'prom-client';
import type { Clock, TimerHandle } from '../../core/clock.ts';
import { errorMessage } from '../../core/errors.ts';
import type { Logger } from '../../core/logger.ts';
import { counter } from '../../core/metrics.ts';
import type { MonitorHealth, Status } from '../../core/types.ts';
import type { HostPaths } from '../../host/paths.ts';
import { realStatfs, type StatfsFn } from '../../host/procfs/statfs.ts';
import type { MonitorDeps } from '../deps.ts';
import type { Monitor, MonitorType } from '../monitor.ts';
import { type StatsCollector, type StatsEnv, statsProcPaths } from './common.ts';
import { createCpuCollector } from './cpu.ts';
import { createDiskCollector } from './disk.ts';
import { createHostCollector } from './host.ts';
import { createMemoryCollector } from './memory.ts';
import { createNetCollector } from './net.ts';
import { createOsFeatureCollector } from './os-feature.ts';
import { type SystemStatsConfig, systemStatsConfigKind } from './schema.ts';

export interface SystemStatsDeps {
  readonly clock: Clock;
  readonly logger: Logger;
  readonly registry: Registry;
  readonly paths: HostPaths;
  /** Injectable so tests can give exact file-system sizes. */
  readonly statfs?: StatfsFn;
}

type CollectorFactory = (config: SystemStatsConfig, env: StatsEnv) => StatsCollector | undefined;

/** By `collector` label, in NPD's order of collection. */
function collectorFactories(): readonly (readonly [string, CollectorFactory])[] {
  return [
    ['cpu', createCpuCollector],
    ['disk', createDiskCollector],
    ['host', createHostCollector],
    ['memory', createMemoryCollector],
    ['os-feature', createOsFeatureCollector],
    ['net', createNetCollector],
  ];
}

/**
 * NPD's system-stats-monitor: host metrics under NPD's names, collected once at start and then every
 * invokeInterval. It reports no conditions or events (NPD's returns no status channel at all); a failed
 * read is counted in npd_system_stats_errors_total{collector} and shows in health, never stops the monitor.
 */
export class SystemStatsMonitor implements Monitor {
  readonly source: string;
  private readonly config: SystemStatsConfig;
  private readonly deps: SystemStatsDeps;
  private readonly logger: Logger;
  private readonly errors: Counter<'collector'>;
  /** Each collector's failure in its latest collection, by collector name. */
  private readonly failures = new Map<string, string>();
  /** Collectors that could read nothing at all in their latest collection. */
  private readonly broken = new Set<string>();
  /** The failure last logged per collector: a missing file would otherwise log every interval. */
  private readonly logged = new Map<string, string>();
  private collectors: readonly StatsCollector[] = [];
  private timer: TimerHandle | undefined;
  private inFlight: Promise<void> = Promise.resolve();
  private running = false;

  constructor(config: SystemStatsConfig, deps: SystemStatsDeps) {
    this.source = config.source;
    this.config = config;
    this.deps = deps;
    this.logger = deps.logger.child({ source: config.source, monitor: 'system-stats' });
    this.errors = counter(deps.registry, {
      name: 'npd_system_stats_errors_total',
      help: 'System-stats collections that failed in part or in full, by collector.',
      labelNames: ['collector'],
    });
  }

  /** `emit` is never called: NPD's system-stats-monitor has no status channel. */
  async start(_emit: (status: Status) => void): Promise<void> {
    if (this.running) return;
    this.running = true;
    this.collectors = collectorFactories().flatMap(([name, create]) => {
      const collector = create(this.config, this.env(name));
      return collector ? [collector] : [];
    });
    for (const c of this.collectors) this.errors.inc({ collector: c.name }, 0);
    this.logger.info({ collectors: this.collectors.map((c) => c.name) }, 'system stats monitor started');
    // Not awaited: a slow statfs must not hold up the agent's start; the metrics appear when it is done.
    this.tick();
  }

  async stop(): Promise<void> {
    if (!this.running) return;
    this.running = false;
    this.timer?.cancel();
    this.timer = undefined;
    await this.inFlight;
    for (const c of this.collectors) c.dispose();
    this.collectors = [];
    this.failures.clear();
    this.broken.clear();
  }

  /**
   * Unhealthy only when no collector could read anything: these metrics are optional, and a liveness
   * restart over one missing file (say /proc/modules in a sandboxed kernel) would not bring it back.
   */
  health(): MonitorHealth {
    const detail = [...this.failures].map(([name, message]) => `${name}: ${message}`).join('; ');
    const healthy = this.broken.size === 0 || this.broken.size < this.collectors.length;
    return { up: this.running, healthy, ...(detail ? { detail } : {}) };
  }

  /** Resolves when the collection in progress, if any, has finished. */
  idle(): Promise<void> {
    return this.inFlight;
  }

  private env(collector: string): StatsEnv {
    const { registry, clock, paths } = this.deps;
    return {
      registry,
      clock,
      paths,
      ...statsProcPaths(paths, this.config.procPath),
      statfs: this.deps.statfs ?? realStatfs,
      fail: (err) => this.fail(collector, err),
    };
  }

  private fail(collector: string, err: unknown): void {
    const message = errorMessage(err);
    this.errors.inc({ collector });
    this.failures.set(collector, message);
    if (this.logged.get(collector) === message) return;
    this.logged.set(collector, message);
    this.logger.warn({ collector, err: message }, 'system stats collection failed');
  }

  private tick(): void {
    const startedAt = this.deps.clock.now();
    this.inFlight = this.collectAll().finally(() => {
      if (!this.running) return;
      // Fixed rate, as NPD's ticker; a collection that overran starts the next one at once.
      const delay = Math.max(0, startedAt + this.config.invokeIntervalMs - this.deps.clock.now());
      this.timer = this.deps.clock.setTimeout(() => this.tick(), delay);
    });
  }

  private async collectAll(): Promise<void> {
    for (const c of this.collectors) {
      if (!this.running) return;
      this.failures.delete(c.name);
      this.broken.delete(c.name);
      try {
        await c.collect();
      } catch (err) {
        this.broken.add(c.name);
        this.fail(c.name, err);
      }
      if (!this.failures.has(c.name) && this.logged.delete(c.name)) {
        this.logger.info({ collector: c.name }, 'system stats collection recovered');
      }
    }
  }
}

export const systemStatsMonitorType: MonitorType<SystemStatsConfig> = {
  configKind: systemStatsConfigKind,
  create: (config, deps: MonitorDeps) => new SystemStatsMonitor(config, deps),
};
