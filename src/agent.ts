import type { Registry } from 'prom-client';
import type { LoadedConfig } from './config/load.ts';
import type { Options } from './config/options.ts';
import { EventDispatcher } from './events/dispatcher.ts';
import { createExporter, type Exporter } from './exporter.ts';
import { ProblemMetrics } from './metrics/problem-metrics.ts';
import { hostPaths, type MonitorDeps } from './monitors/deps.ts';
import type { MonitorType } from './monitors/registry.ts';
import { MonitorSupervisor } from './monitors/supervisor.ts';
import { type Endpoints, HttpServers } from './server/http.ts';
import type { Condition, Status } from './types.ts';
import type { Clock } from './util/clock.ts';
import type { Logger } from './util/logger.ts';

export interface AgentDeps {
  readonly options: Options;
  readonly configs: readonly LoadedConfig[];
  readonly types: readonly MonitorType[];
  readonly clock: Clock;
  readonly registry: Registry;
  readonly logger: Logger;
  readonly version: string;
}

/**
 * The composition root: monitors feed statuses one way into the condition manager and the event
 * pipeline, while the HTTP servers report health, conditions and metrics.
 */
export class Agent {
  private readonly deps: AgentDeps;
  private readonly servers = new HttpServers();
  private readonly seen = new Map<string, Condition>();
  private supervisor: MonitorSupervisor | undefined;
  private exporter: Exporter | undefined;
  private dispatcher: EventDispatcher | undefined;

  constructor(deps: AgentDeps) {
    this.deps = deps;
  }

  async start(): Promise<void> {
    const { options, clock, registry, logger } = this.deps;
    const monitorDeps: MonitorDeps = {
      clock,
      logger,
      registry,
      problemMetrics: new ProblemMetrics(registry),
      paths: hostPaths(options.hostRoot),
    };
    const monitors = this.deps.configs.map((c) => this.typeOf(c).create(c.config, monitorDeps));
    this.exporter = await createExporter({ options, clock, registry, logger, version: this.deps.version });
    this.dispatcher = new EventDispatcher(registry);
    this.exporter.attachEvents(this.dispatcher);
    this.supervisor = new MonitorSupervisor(monitors, { clock, logger, registry });
    await this.servers.listen(
      this.endpoints(),
      { address: options.address, port: options.port },
      { address: options.prometheusAddress, port: options.prometheusPort },
    );
    await this.supervisor.start((status) => this.onStatus(status));
    logger.info({ mode: this.exporter.mode, monitors: monitors.map((m) => m.source), node: options.nodeName }, 'agent started');
  }

  async stop(graceMs: number): Promise<void> {
    await this.supervisor?.stop();
    await this.exporter?.stop(graceMs);
    await this.servers.close();
  }

  /** The bound ports (status first), for tests that listen on port 0. */
  ports(): number[] {
    return this.servers.ports();
  }

  private onStatus(status: Status): void {
    for (const c of status.conditions) {
      const prev = this.seen.get(c.type);
      if (!prev || prev.status !== c.status || prev.reason !== c.reason) {
        this.deps.logger.info({ source: status.source, condition: c.type, status: c.status, reason: c.reason, message: c.message }, 'condition');
      }
      this.seen.set(c.type, c);
      this.exporter?.conditions.update(c);
    }
    this.dispatcher?.dispatch(status.source, status.events);
  }

  private endpoints(): Endpoints {
    return {
      registry: this.deps.registry,
      health: () => this.supervisor?.liveness() ?? { ok: false, detail: 'starting\n' },
      ready: () => {
        const synced = this.exporter?.conditions.synced() ?? false;
        return { ok: synced, detail: synced ? 'node sync ok\n' : 'node conditions not synced\n' };
      },
      conditions: () => this.exporter?.conditions.conditions() ?? [],
    };
  }

  private typeOf(loaded: LoadedConfig): MonitorType {
    const type = this.deps.types.find((t) => t.configKind.kind === loaded.kind);
    if (!type) throw new Error(`${loaded.file}: no monitor type for ${loaded.kind}`);
    return type;
  }
}
