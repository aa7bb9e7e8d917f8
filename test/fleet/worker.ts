/**
 * One worker process of the fleet (forked by workers.ts): its share of the identities, each the agent's
 * own exporter stack (createExporter: KubeClient, NodeInfo, ConditionManager with KubeNodeStatusWriter,
 * the recorder pipeline with KubeEventSink) fed by a fake kernel monitor. Only the monitors are fake.
 * All identities of the worker share one metrics registry, so its counters are the worker's totals.
 */
import { join } from 'node:path';
import pino from 'pino';
import type { Registry } from 'prom-client';
import { createExporter } from '../../src/agent/exporter.ts';
import { parseOptions } from '../../src/agent/options.ts';
import { monitorTypes } from '../../src/agent/registry.ts';
import { allConditionTypes } from '../../src/conditions/owners.ts';
import { type LoadedConfig, loadConfigs } from '../../src/config/load.ts';
import { systemClock } from '../../src/core/clock.ts';
import type { Logger } from '../../src/core/logger.ts';
import { createRegistry } from '../../src/core/metrics.ts';
import type { Condition } from '../../src/core/types.ts';
import { hitKernelError, type Identity } from '../bench/scale-fleet.ts';
import { REPO } from '../support/agent-process.ts';
import type { FleetIdentity } from './identities.ts';
import {
  type Command,
  EVENT_SOURCE,
  FLEET_EVENT_REASON,
  type MetricTotals,
  type Reply,
  type Request,
  type WireCondition,
} from './protocol.ts';
import { sleep } from './util.ts';

/** kernel, readonly and probes: the set the scale model (scale-fleet.ts) runs, so the two compare. */
function configs(): LoadedConfig[] {
  const files = ['kernel.yaml', 'readonly.yaml', 'probes.yaml'].map((f) => ({
    file: join(REPO, 'rules', f),
  }));
  return loadConfigs(
    files,
    monitorTypes().map((t) => t.configKind),
  );
}

/** Every declared condition in its healthy state, as the monitors report them at start. */
function initialConditions(loaded: readonly LoadedConfig[], now: number): Condition[] {
  type Decl = { type: string; reason: string; message: string };
  return loaded.flatMap((c) =>
    ((c.config as { conditions?: Decl[] }).conditions ?? []).map((d) => ({
      type: d.type,
      status: 'False' as const,
      transition: now,
      reason: d.reason,
      message: d.message,
    })),
  );
}

interface State {
  identities: readonly FleetIdentity[];
  heartbeatSeconds: number;
  logger: Logger;
  registry: Registry;
  running: Identity[];
}

let state: State | undefined;
const loaded = configs();
const conditionTypes = allConditionTypes(loaded);

async function startOne(s: State, id: FleetIdentity): Promise<Identity> {
  const argv = [
    `--kubeconfig=${id.kubeconfig}`,
    `--hostname-override=${id.name}`,
    `--k8s-exporter-heartbeat-period=${s.heartbeatSeconds}s`,
  ];
  const { options, errors } = parseOptions(argv, {}, id.name);
  if (errors.length > 0) throw new Error(errors.join('\n'));
  const exporter = await createExporter({
    options,
    conditionTypes,
    publishes: () => true,
    bootId: undefined,
    onStartup: () => {},
    clock: systemClock,
    registry: s.registry,
    logger: s.logger,
    version: 'fleet-bench',
  });
  for (const c of initialConditions(loaded, Date.now())) exporter.conditions.update(c);
  return { name: id.name, exporter };
}

/** A rollout: each identity starts at its own random moment of the window. */
async function start(s: State, jitterMs: number): Promise<number> {
  await Promise.all(
    s.identities.map(async (id) => {
      await sleep(Math.random() * jitterMs);
      s.running.push(await startOne(s, id));
    }),
  );
  return s.running.length;
}

function setCondition(s: State, c: WireCondition): number {
  const now = Date.now();
  for (const n of s.running) n.exporter.conditions.update({ ...c, transition: now });
  return s.running.length;
}

function recordEvents(s: State, tag: string, count: number): number {
  const now = Date.now();
  for (const n of s.running)
    n.exporter.events.dispatch(
      EVENT_SOURCE,
      Array.from({ length: count }, (_, i) => ({
        severity: 'warn' as const,
        timestamp: now,
        reason: FLEET_EVENT_REASON,
        message: `${tag} ${n.name} ${i}`,
      })),
    );
  return s.running.length * count;
}

/** Counters and gauges of the npd_ metrics (histograms left out), summed over the worker's identities. */
async function metrics(s: State): Promise<MetricTotals> {
  const out: MetricTotals = {};
  for (const m of await s.registry.getMetricsAsJSON()) {
    if (!m.name.startsWith('npd_') || (m.type as unknown as string) === 'histogram') continue;
    for (const v of m.values) {
      const labels = Object.entries(v.labels ?? {})
        .map(([k, x]) => `${k}="${x}"`)
        .join(',');
      const key = labels ? `${m.name}{${labels}}` : m.name;
      out[key] = (out[key] ?? 0) + Number(v.value);
    }
  }
  return out;
}

async function handle(c: Command): Promise<unknown> {
  if (c.cmd === 'init') {
    const logger = pino({ level: 'warn' }, pino.destination({ dest: c.logFile, sync: false }));
    state = { ...c, logger, registry: createRegistry(), running: [] };
    return c.identities.length;
  }
  const s = state;
  if (!s) throw new Error('not initialised');
  if (c.cmd === 'start') return start(s, c.jitterMs);
  if (c.cmd === 'condition') return setCondition(s, c.condition);
  if (c.cmd === 'hung') {
    for (const n of s.running) hitKernelError(n, c.first);
    return s.running.length;
  }
  if (c.cmd === 'events') return recordEvents(s, c.tag, c.count);
  if (c.cmd === 'metrics') return metrics(s);
  await Promise.all(s.running.map((n) => n.exporter.stop(c.graceMs)));
  return s.running.length;
}

process.on('message', (msg: Request) => {
  handle(msg.command).then(
    (result) => process.send?.({ id: msg.id, ok: true, result } satisfies Reply),
    (err: unknown) => process.send?.({ id: msg.id, ok: false, error: String(err) } satisfies Reply),
  );
});
process.on('disconnect', () => process.exit(0));
