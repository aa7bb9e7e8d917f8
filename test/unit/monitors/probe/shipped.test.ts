import assert from 'node:assert/strict';
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { monitorTypes } from '../../../../src/agent/registry.ts';
import { loadConfigs } from '../../../../src/config/load.ts';
import { systemClock } from '../../../../src/core/clock.ts';
import { silentLogger } from '../../../../src/core/logger.ts';
import { createRegistry } from '../../../../src/core/metrics.ts';
import type { Status } from '../../../../src/core/types.ts';
import { type HostPaths, hostPaths } from '../../../../src/host/paths.ts';
import { ProblemMetrics } from '../../../../src/metrics/problem-metrics.ts';
import type { MonitorDeps } from '../../../../src/monitors/deps.ts';
import type { ProbeMonitorConfig } from '../../../../src/monitors/probe/schema.ts';
import { fakeHost } from './helpers.ts';

const RULES = join(import.meta.dirname, '../../../../rules');
const FIXTURES = join(import.meta.dirname, '../../../fixtures/probes');

/** Runs rules/probes.yaml through the registered monitor type until every probe has reported once. */
async function runShipped(paths: HostPaths): Promise<Status> {
  const types = monitorTypes();
  const [loaded] = loadConfigs(
    [{ file: join(RULES, 'probes.yaml'), kind: 'probe-monitor' }],
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

describe('rules/probes.yaml end to end', () => {
  it('reports the problems of a fake host', async () => {
    const host = await fakeHost({
      'proc/sys/fs/file-nr': '95 0 100\n',
      'proc/loadavg': '0.00 0.01 0.05 1/120 999\n',
      'proc/sys/kernel/pid_max': '32768\n',
      'proc/sys/kernel/threads-max': '60000\n',
      'proc/1/mountinfo': await readFile(join(FIXTURES, 'mountinfo-ro-kubelet'), 'utf8'),
    });
    const status = await runShipped(host);
    const byType = Object.fromEntries(status.conditions.map((c) => [c.type, [c.status, c.reason]]));
    assert.deepEqual(byType.FileHandlePressure, ['True', 'FileHandlesNearLimit']);
    assert.deepEqual(byType.ProcessLimitPressure, ['False', 'PIDsAvailable']);
    assert.deepEqual(byType.ConntrackPressure, ['False', 'ConntrackTableAvailable']);
    assert.deepEqual(byType.ReadonlyRootFilesystem, ['True', 'RootFilesystemIsReadOnly']);
    // Disk and inodes measure the temp directory's real file system: any verdict but Unknown.
    assert.notEqual(byType.FilesystemSpacePressure?.[0], 'Unknown');
    assert.notEqual(byType.FilesystemInodePressure?.[0], 'Unknown');
    assert.equal(status.conditions.length, 6);
  });

  it('gives a verdict for every default probe on this machine', async () => {
    const status = await runShipped(hostPaths('/'));
    const unknown = status.conditions.filter((c) => c.status === 'Unknown');
    assert.deepEqual(unknown, []);
    assert.equal(status.conditions.length, 6);
  });
});
