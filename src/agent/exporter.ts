import type { Registry } from 'prom-client';
import { ConditionManager } from '../conditions/manager.ts';
import { KubeNodeStatusWriter } from '../conditions/node-status-writer.ts';
import { Ownership, type StartupPlan } from '../conditions/ownership.ts';
import type { Clock } from '../core/clock.ts';
import type { Logger } from '../core/logger.ts';
import { EventDispatcher, type RecorderSource } from '../events/dispatcher.ts';
import { createPersistSinks, type PersistSinks } from '../events/persist/config.ts';
import { createEventPipeline, type EventPipelineOptions, nodeRef } from '../events/record/index.ts';
import { KubeEventSink } from '../events/record/kube-sink.ts';
import { KubeEventsV1Sink } from '../events/series/kube-sink.ts';
import { TypedEventsV1Sink } from '../events/series/kube-typed.ts';
import { createEventsV1Pipeline } from '../events/series/pipeline.ts';
import { KubeClient } from '../kube/client.ts';
import type { ApiConnection } from '../kube/connection.ts';
import { NodeInfo } from '../kube/node-info.ts';
import { TaintController } from '../taints/controller.ts';
import { findCluster } from './cluster.ts';
import { createDiagnostics, type DiagnosticsFeature } from './diagnostics.ts';
import type { Options } from './options.ts';

export interface ExporterDeps {
  readonly options: Options;
  /** The declared condition types this agent writes (--extra-conditions): what it owns on the Node. */
  readonly conditionTypes: readonly string[];
  readonly publishes: (type: string) => boolean;
  readonly bootId: string | undefined;
  /** Called once with the Node's state, before the first condition sync. */
  readonly onStartup: (plan: StartupPlan) => void;
  readonly clock: Clock;
  readonly registry: Registry;
  readonly logger: Logger;
  readonly version: string;
  /** Uniform in [0, 1): the jitter of start-up, heartbeats and retries; Math.random by default. */
  readonly random?: () => number;
}

/** The API side of the agent, or its standalone stand-in: where conditions and events go. */
export interface Exporter {
  readonly mode: 'kubernetes' | 'standalone';
  readonly conditions: ConditionManager;
  /** Only in kubernetes mode with --taint-on-condition: sees every condition update too. */
  readonly taints?: TaintController;
  /** Only in kubernetes mode with --diagnostics. */
  readonly diagnostics?: DiagnosticsFeature;
  /** After a reload: the condition types the agent now owns (dropped ones are deleted on the Node). */
  setConditionTypes?(types: readonly string[]): void;
  /** Takes monitor events; they are recorded once the Node UID is known (at once without a cluster). */
  readonly events: Pick<EventDispatcher, 'dispatch' | 'declare'>;
  /** Kubernetes mode: the Node's status.capacity of a resource as last seen (NodeInfo.capacity). */
  nodeCapacity?(resource: string): string | undefined;
  stop(graceMs: number): Promise<void>;
}

/**
 * Builds the Kubernetes exporter when a cluster config is found and --enable-k8s-exporter is on;
 * otherwise a standalone exporter that only logs. Nothing here waits for the API server.
 */
export async function createExporter(deps: ExporterDeps): Promise<Exporter> {
  const connection = await findCluster(deps.options, deps.clock, deps.logger);
  return connection ? kubernetes(deps, connection) : standalone(deps);
}

/** What a running Kubernetes exporter holds on to between attachEvents and stop. */
interface KubeParts {
  readonly deps: ExporterDeps;
  readonly client: KubeClient;
  readonly nodeInfo: NodeInfo;
  readonly ownership: Ownership;
  readonly startup: Promise<StartupPlan | undefined>;
  readonly conditions: ConditionManager;
  readonly taints: TaintController | undefined;
  readonly diagnostics: DiagnosticsFeature | undefined;
  readonly persist: PersistSinks;
  readonly startedAt: number;
}

function kubernetes(deps: ExporterDeps, connection: ApiConnection): Exporter {
  const { options, clock, registry, logger } = deps;
  const { client, nodeInfo } = connectNode(deps, connection);
  const ownership = new Ownership(deps.conditionTypes, deps.bootId);
  const startup = resumeNodeState(deps, nodeInfo, ownership);
  const conditions = startConditions(deps, client, nodeInfo, ownership, startup);
  const startedAt = clock.now();
  const taints = createTaints(deps, client, startup);
  const persist = createPersistSinks(options, { clock, registry, logger });
  const diagnostics = createDiagnostics(deps, client, () => conditions.conditions());
  const parts = { deps, client, nodeInfo, ownership, startup, conditions, taints, diagnostics, persist };
  return kubeExporter({ ...parts, startedAt });
}

function connectNode(
  deps: ExporterDeps,
  connection: ApiConnection,
): { client: KubeClient; nodeInfo: NodeInfo } {
  const { options, clock, registry, logger } = deps;
  logger.info(
    { server: connection.server, source: connection.source, node: options.nodeName },
    'reporting to the API server',
  );
  const client = new KubeClient({
    connection,
    version: deps.version,
    registry,
    clock,
    logger,
    timeoutMs: options.apiTimeoutMs,
    qps: options.kubeApiQps,
    burst: options.kubeApiBurst,
  });
  const { random } = deps;
  const nodeInfo = new NodeInfo({ client, nodeName: options.nodeName, clock, registry, logger, random });
  nodeInfo.start();
  return { client, nodeInfo };
}

function resumeNodeState(
  deps: ExporterDeps,
  nodeInfo: NodeInfo,
  ownership: Ownership,
): Promise<StartupPlan | undefined> {
  return nodeInfo.ready.then(() => {
    const node = nodeInfo.node();
    if (!node) return undefined;
    const plan = ownership.plan(node);
    deps.logger.info(
      { restored: plan.restore.map((c) => `${c.type}=${c.status}`), stale: plan.stale },
      'resuming node state',
    );
    deps.onStartup(plan);
    return plan;
  });
}

function startConditions(
  deps: ExporterDeps,
  client: KubeClient,
  nodeInfo: NodeInfo,
  ownership: Ownership,
  startup: Promise<unknown>,
): ConditionManager {
  const { options, clock, registry, logger } = deps;
  const writer = options.updateNodeConditions
    ? new KubeNodeStatusWriter(nodeInfo.observing(client), options.nodeName, (uid) => nodeInfo.observe(uid))
    : undefined;
  const conditions = new ConditionManager({
    writer,
    clock,
    registry,
    logger,
    heartbeatPeriodMs: options.heartbeatPeriodMs,
    random: deps.random,
    hold: startup,
    extras: () => ownership.extras(),
    onSynced: (sent) => sent && ownership.confirmed(sent),
    publishes: deps.publishes,
  });
  conditions.start();
  return conditions;
}

function kubeExporter(parts: KubeParts): Exporter {
  const { conditions, ownership, taints, diagnostics } = parts;
  let pipeline: EventOutlet | undefined;
  const events = new EventDispatcher(parts.deps.registry);
  // Events wait in the dispatcher until the Node's UID and the watermarks of the last run are known.
  void parts.startup.then((plan) => {
    pipeline = apiEvents(parts.deps, parts.client, parts.nodeInfo.uid() ?? '', parts.persist.watchers);
    events.attach(pipeline, {
      watermarks: plan?.watermarks,
      startedAt: parts.startedAt,
      // A moved watermark is due no sooner than the heartbeat, so it costs no write of its own: it rides
      // the next status patch (a condition change, the heartbeat, the shutdown flush) and a correlated
      // failure costs NPD's writes. After a crash up to one heartbeat period of events may be posted
      // again, which NPD does after every restart.
      onRecorded: (source, timestamp) => {
        if (ownership.advance(source, timestamp, parts.deps.clock.now()))
          conditions.requestSync(parts.deps.options.heartbeatPeriodMs);
      },
    });
  });
  return {
    mode: 'kubernetes',
    conditions,
    nodeCapacity: (resource) => parts.nodeInfo.capacity(resource),
    setConditionTypes(types) {
      ownership.configure(types);
      conditions.requestSync(0);
    },
    ...(taints ? { taints } : {}),
    ...(diagnostics ? { diagnostics } : {}),
    events,
    async stop(graceMs) {
      for (const part of [parts.nodeInfo, taints, diagnostics]) part?.stop();
      // Events first: writing them moves the watermarks that the last condition patch carries.
      await pipeline?.shutdown(graceMs);
      await conditions.flush();
      await parts.persist.close();
      parts.client.close();
    },
  };
}

/** Where the dispatcher records events, and how they are flushed at shutdown. */
interface EventOutlet extends RecorderSource {
  shutdown(graceMs: number): Promise<void>;
}

/** core/v1 events through client-go's correlator (NPD's choice), or events.k8s.io/v1 series. */
function apiEvents(
  deps: ExporterDeps,
  client: KubeClient,
  uid: string,
  extraWatchers: EventPipelineOptions['extraWatchers'],
): EventOutlet {
  const { options, clock, registry, logger } = deps;
  const common = {
    clock,
    registry,
    logger,
    random: deps.random,
    host: options.nodeName,
    namespace: options.eventNamespace || 'default',
  };
  const node = nodeRef(options.nodeName, uid);
  if (options.writeEvents && options.eventsApi === 'events.k8s.io') {
    const sink = new TypedEventsV1Sink(new KubeEventsV1Sink(client));
    // The v1 series go to the API; a sink-less core pipeline still logs and persists every occurrence.
    return tee(
      createEventsV1Pipeline({ ...common, sink, node }),
      createEventPipeline({ ...common, node, extraWatchers }),
    );
  }
  const sink = options.writeEvents ? new KubeEventSink(client) : undefined;
  return createEventPipeline({ ...common, sink, node, extraWatchers });
}

function tee(api: EventOutlet, local: EventOutlet): EventOutlet {
  return {
    recorderFor(source) {
      const targets = [api.recorderFor(source), local.recorderFor(source)];
      return {
        event: (type, reason, message, annotations) =>
          targets.map((t) => t.event(type, reason, message, annotations)),
      };
    },
    async shutdown(graceMs) {
      await Promise.all([api.shutdown(graceMs), local.shutdown(graceMs)]);
    },
  };
}

/** Opt-in: without --taint-on-condition nothing is built, so no `patch nodes` request can happen. */
function createTaints(
  deps: ExporterDeps,
  client: KubeClient,
  hold: Promise<unknown>,
): TaintController | undefined {
  const { options, clock, registry, logger } = deps;
  const { taintOnCondition: rules, nodeName } = options;
  if (rules.length === 0) return undefined;
  const taints = new TaintController({ rules, client, nodeName, clock, registry, logger, hold });
  taints.start();
  return taints;
}

function standalone(deps: ExporterDeps): Exporter {
  const { options, clock, registry, logger, publishes } = deps;
  const conditions = new ConditionManager({ writer: undefined, clock, registry, logger, publishes });
  const persist = createPersistSinks(options, { clock, registry, logger });
  const pipeline = createEventPipeline({
    clock,
    registry,
    logger,
    node: nodeRef(options.nodeName, ''),
    host: options.nodeName,
    namespace: options.eventNamespace || 'default',
    extraWatchers: persist.watchers,
  });
  const events = new EventDispatcher(registry);
  events.attach(pipeline);
  return {
    mode: 'standalone',
    conditions,
    events,
    stop: async (graceMs) => {
      await pipeline.shutdown(graceMs);
      await persist.close();
    },
  };
}
