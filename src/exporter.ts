import type { Registry } from 'prom-client';
import { ConditionManager } from './conditions/manager.ts';
import type { Options } from './config/options.ts';
import type { EventDispatcher } from './events/dispatcher.ts';
import { KubeClient } from './k8s/client.ts';
import { resolveConnection } from './k8s/config.ts';
import { NodeInfo } from './k8s/node-info.ts';
import { KubeNodeStatusWriter } from './k8s/node-status-writer.ts';
import { createEventPipeline, type EventPipeline, nodeRef } from './recorder/index.ts';
import { KubeEventSink } from './sinks/k8s-event-sink.ts';
import type { Clock } from './util/clock.ts';
import type { Logger } from './util/logger.ts';

export interface ExporterDeps {
  readonly options: Options;
  readonly clock: Clock;
  readonly registry: Registry;
  readonly logger: Logger;
  readonly version: string;
}

/** The API side of the agent, or its standalone stand-in: where conditions and events go. */
export interface Exporter {
  readonly mode: 'kubernetes' | 'standalone';
  readonly conditions: ConditionManager;
  /** Resolves once events can be recorded (the Node UID is known, or there is no cluster). */
  attachEvents(dispatcher: EventDispatcher): void;
  stop(graceMs: number): Promise<void>;
}

/**
 * Builds the Kubernetes exporter when a cluster config is found and --enable-k8s-exporter is on;
 * otherwise a standalone exporter that only logs. Nothing here waits for the API server.
 */
export async function createExporter(deps: ExporterDeps): Promise<Exporter> {
  const { options, clock, registry, logger } = deps;
  const connection = options.enableK8sExporter
    ? await resolveConnection({ apiserverOverride: options.apiserverOverride, kubeconfig: options.kubeconfig, clock, logger })
    : undefined;
  if (!connection) {
    if (options.enableK8sExporter) logger.warn('no cluster config found (in-cluster, --kubeconfig, KUBECONFIG); running standalone');
    return standalone(deps);
  }
  logger.info({ server: connection.server, source: connection.source, node: options.nodeName }, 'reporting to the API server');
  const client = new KubeClient({ connection, version: deps.version, registry, clock, logger, timeoutMs: options.apiTimeoutMs });
  const nodeInfo = new NodeInfo({ client, nodeName: options.nodeName, clock, registry, logger });
  nodeInfo.start();
  const writer = options.updateNodeConditions
    ? new KubeNodeStatusWriter(client, options.nodeName, (uid) => nodeInfo.observe(uid))
    : undefined;
  const conditions = new ConditionManager({ writer, clock, registry, logger, heartbeatPeriodMs: options.heartbeatPeriodMs });
  conditions.start();
  let pipeline: EventPipeline | undefined;
  return {
    mode: 'kubernetes',
    conditions,
    attachEvents(dispatcher) {
      void nodeInfo.ready.then((uid) => {
        pipeline = createEventPipeline({
          clock,
          registry,
          logger,
          sink: options.writeEvents ? new KubeEventSink(client) : undefined,
          node: nodeRef(options.nodeName, uid),
          host: options.nodeName,
          namespace: options.eventNamespace || 'default',
        });
        dispatcher.attach(pipeline);
      });
    },
    async stop(graceMs) {
      nodeInfo.stop();
      conditions.stop();
      await pipeline?.shutdown(graceMs);
      client.close();
    },
  };
}

function standalone(deps: ExporterDeps): Exporter {
  const { options, clock, registry, logger } = deps;
  const conditions = new ConditionManager({ writer: undefined, clock, registry, logger });
  const pipeline = createEventPipeline({
    clock,
    registry,
    logger,
    node: nodeRef(options.nodeName, ''),
    host: options.nodeName,
    namespace: options.eventNamespace || 'default',
  });
  return {
    mode: 'standalone',
    conditions,
    attachEvents: (dispatcher) => dispatcher.attach(pipeline),
    stop: (graceMs) => pipeline.shutdown(graceMs),
  };
}
