/**
 * Many node identities in one process for the scale model. Each identity is the agent's own exporter
 * (createExporter: KubeClient, NodeInfo, ConditionManager with KubeNodeStatusWriter, the recorder
 * pipeline with KubeEventSink, the EventDispatcher in front of it), fed by a fake kernel monitor instead of real
 * monitors. Only the monitors are fake: everything that talks to the API server is the shipped code.
 */
import { join } from 'node:path';
import type { Registry } from 'prom-client';
import { createExporter, type Exporter } from '../../src/agent/exporter.ts';
import { parseOptions } from '../../src/agent/options.ts';
import { monitorTypes } from '../../src/agent/registry.ts';
import { allConditionTypes } from '../../src/conditions/owners.ts';
import { type LoadedConfig, loadConfigs } from '../../src/config/load.ts';
import { systemClock } from '../../src/core/clock.ts';
import type { Logger } from '../../src/core/logger.ts';
import type { Condition, ProblemEvent } from '../../src/core/types.ts';
import type { ControlPlane } from '../e2e/harness/controlplane.ts';
import { REPO } from '../support/agent-process.ts';

export const KERNEL_SOURCE = 'kernel-monitor';

/**
 * kernel, readonly and probes: the set BENCHMARKS.md section e. measures, kept so its numbers stay
 * comparable (the flag-less default, cli.ts DEFAULT_RULES, also runs hardware, storage and network).
 */
function defaultConfigs(): LoadedConfig[] {
  const files = ['kernel.yaml', 'readonly.yaml', 'probes.yaml'].map((f) => ({
    file: join(REPO, 'rules', f),
  }));
  return loadConfigs(
    files,
    monitorTypes().map((t) => t.configKind),
  );
}

/** Every condition the default config declares, in its healthy state, as the monitors report at start. */
function initialConditions(configs: readonly LoadedConfig[], now: number): Condition[] {
  return configs.flatMap((c) =>
    ((c.config as { conditions?: { type: string; reason: string; message: string }[] }).conditions ?? []).map(
      (d) => ({
        type: d.type,
        status: 'False' as const,
        transition: now,
        reason: d.reason,
        message: d.message,
      }),
    ),
  );
}

export interface Identity {
  readonly name: string;
  readonly exporter: Exporter;
}

export interface FleetOptions {
  readonly cp: ControlPlane;
  readonly nodes: number;
  readonly heartbeatSeconds: number;
  readonly registry: Registry;
  readonly logger: Logger;
}

export function nodeName(i: number): string {
  return `npd-scale-${String(i).padStart(5, '0')}`;
}

/** Registers the Nodes as a kubelet would (admin), a few at a time. */
export async function createNodes(cp: ControlPlane, count: number): Promise<void> {
  for (let i = 0; i < count; i += 20) {
    const batch = Array.from({ length: Math.min(20, count - i) }, (_, k) => nodeName(i + k));
    await Promise.all(
      batch.map(async (name) => {
        const body = { apiVersion: 'v1', kind: 'Node', metadata: { name, labels: { 'npd-scale': 'true' } } };
        const r = await cp.request('POST', '/api/v1/nodes', { body });
        if (r.status !== 201 && r.status !== 409)
          throw new Error(`create node ${name}: ${r.status} ${r.text}`);
      }),
    );
  }
}

export async function startFleet(opts: FleetOptions): Promise<Identity[]> {
  const configs = defaultConfigs();
  const conditionTypes = allConditionTypes(configs);
  const initial = initialConditions(configs, Date.now());
  const fleet: Identity[] = [];
  for (let i = 0; i < opts.nodes; i++) {
    const name = nodeName(i);
    const argv = [
      `--kubeconfig=${opts.cp.agentKubeconfig}`,
      `--hostname-override=${name}`,
      `--k8s-exporter-heartbeat-period=${opts.heartbeatSeconds}s`,
    ];
    const { options, errors } = parseOptions(argv, {}, name);
    if (errors.length > 0) throw new Error(errors.join('\n'));
    const exporter = await createExporter({
      options,
      conditionTypes,
      publishes: () => true,
      bootId: undefined,
      onStartup: () => {},
      clock: systemClock,
      registry: opts.registry,
      logger: opts.logger,
      version: 'scale-bench',
    });
    for (const c of initial) exporter.conditions.update(c);
    fleet.push({ name, exporter });
  }
  return fleet;
}

const HUNG = 'task docker:4321 blocked for more than 120 seconds.';

/**
 * The same kernel error on one node, as the shipped kernel.yaml turns it into statuses: the first line
 * sets KernelDeadlock=True (permanent rule DockerHung, with its event) and fires the temporary TaskHung
 * event; every repeat fires TaskHung again (a permanent condition already True emits nothing new).
 */
export function hitKernelError(node: Identity, first: boolean): void {
  const now = Date.now();
  const events: ProblemEvent[] = [{ severity: 'warn', timestamp: now, reason: 'TaskHung', message: HUNG }];
  if (first) {
    events.unshift({ severity: 'warn', timestamp: now, reason: 'DockerHung', message: HUNG });
    node.exporter.conditions.update({
      type: 'KernelDeadlock',
      status: 'True',
      transition: now,
      reason: 'DockerHung',
      message: HUNG,
    });
  }
  node.exporter.events.dispatch(KERNEL_SOURCE, events);
}

export async function stopFleet(fleet: readonly Identity[]): Promise<void> {
  await Promise.all(fleet.map((n) => n.exporter.stop(5000)));
}
