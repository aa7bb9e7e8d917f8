/**
 * Runs one probe-monitor config through the registered monitor type (the production path) and
 * prints every status as a JSON line, until stdin closes. Spawned by netns.test.ts with
 * `ip netns exec`, so every /proc/net, /proc/sys/net and /sys/class/net read sees that namespace.
 *   node --import tsx run-probes.ts <config.yaml> <host-root>
 */
import { monitorTypes } from '../../../src/agent/registry.ts';
import { loadConfigs } from '../../../src/config/load.ts';
import { systemClock } from '../../../src/core/clock.ts';
import { silentLogger } from '../../../src/core/logger.ts';
import { createRegistry } from '../../../src/core/metrics.ts';
import { hostPaths } from '../../../src/host/paths.ts';
import { ProblemMetrics } from '../../../src/metrics/problem-metrics.ts';
import type { ProbeMonitorConfig } from '../../../src/monitors/probe/schema.ts';

const [file, root] = process.argv.slice(2);
if (!file || !root) throw new Error('usage: run-probes.ts <config.yaml> <host-root>');
const types = monitorTypes();
const [loaded] = loadConfigs(
  [{ file, kind: 'probe-monitor' }],
  types.map((t) => t.configKind),
);
const type = types.find((t) => t.configKind.kind === 'probe-monitor');
if (!loaded || !type) throw new Error('no probe-monitor');
const registry = createRegistry();
const monitor = type.create(
  { ...(loaded.config as ProbeMonitorConfig), splayMs: 0 },
  {
    clock: systemClock,
    logger: silentLogger(),
    registry,
    problemMetrics: new ProblemMetrics(registry),
    paths: hostPaths(root),
  },
);
await monitor.start((status) => process.stdout.write(`${JSON.stringify(status)}\n`));
process.stdin.resume();
process.stdin.on('end', () => {
  void monitor.stop().then(() => process.exit(0));
});
