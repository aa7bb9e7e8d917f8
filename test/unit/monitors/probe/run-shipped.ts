import assert from 'node:assert/strict';
import { join } from 'node:path';
import { monitorTypes } from '../../../../src/agent/registry.ts';
import { loadConfigs } from '../../../../src/config/load.ts';
import { systemClock } from '../../../../src/core/clock.ts';
import { silentLogger } from '../../../../src/core/logger.ts';
import { createRegistry } from '../../../../src/core/metrics.ts';
import type { Status } from '../../../../src/core/types.ts';
import type { HostPaths } from '../../../../src/host/paths.ts';
import { ProblemMetrics } from '../../../../src/metrics/problem-metrics.ts';
import type { MonitorDeps } from '../../../../src/monitors/deps.ts';
import type { ProbeMonitorConfig } from '../../../../src/monitors/probe/schema.ts';

const RULES = join(import.meta.dirname, '../../../../rules');

/** Runs a shipped rules/<file> through the registered monitor type until every probe has reported once. */
export async function runShipped(file: string, paths: HostPaths): Promise<Status> {
  const types = monitorTypes();
  const [loaded] = loadConfigs(
    [{ file: join(RULES, file), kind: 'probe-monitor' }],
    types.map((t) => t.configKind),
  );
  const type = types.find((t) => t.configKind.kind === 'probe-monitor');
  assert.ok(loaded && type);
  const config = { ...(loaded.config as ProbeMonitorConfig), splayMs: 0 };
  const registry = createRegistry();
  const deps: MonitorDeps = {
    clock: systemClock,
    logger: silentLogger(),
    registry,
    problemMetrics: new ProblemMetrics(registry),
    paths,
  };
  const monitor = type.create(config, deps);
  const statuses: Status[] = [];
  await monitor.start((s) => statuses.push(s));
  try {
    // The initial status plus one per probe.
    while (statuses.length < 1 + config.probes.length) await new Promise((r) => setTimeout(r, 10));
  } finally {
    await monitor.stop();
  }
  assert.equal(monitor.health().up, false);
  return statuses.at(-1) as Status;
}
