import assert from 'node:assert/strict';
import { join } from 'node:path';
import { after, describe, it } from 'node:test';
import { monitorTypes } from '../../../../src/agent/registry.ts';
import { loadConfigs } from '../../../../src/config/load.ts';
import { FakeClock } from '../../../../src/core/clock.ts';
import { silentLogger } from '../../../../src/core/logger.ts';
import { createRegistry } from '../../../../src/core/metrics.ts';
import { type HostPaths, hostPaths } from '../../../../src/host/paths.ts';
import { ProblemMetrics } from '../../../../src/metrics/problem-metrics.ts';
import { statsProcPaths } from '../../../../src/monitors/system-stats/common.ts';
import type { SystemStatsMonitor } from '../../../../src/monitors/system-stats/monitor.ts';
import { STATS_METRIC_IDS, type SystemStatsConfig } from '../../../../src/monitors/system-stats/schema.ts';
import { enable, FIXTURES, fakeHost, harness, seriesValue, statsConfig, T0, writeFiles } from './helpers.ts';
import { fullHost } from './proc-trees.ts';

/** The Prometheus names NPD's e2e test (test/e2e/metriconly) asserts. */
const E2E_NAMES = [
  'cpu_runnable_task_count',
  'cpu_usage_time',
  'cpu_load_1m',
  'disk_operation_count',
  'disk_bytes_used',
  'disk_percent_used',
  'memory_bytes_used',
  'memory_unevictable_used',
  'memory_percent_used',
  'host_uptime',
  'system_os_feature',
];

/** Builds a monitor through the registered monitor type, as the agent does. */
async function throughRegistry(files: readonly string[], paths: HostPaths) {
  const type = monitorTypes().find((t) => t.configKind.kind === 'system-stats-monitor');
  assert.ok(type);
  const loaded = loadConfigs(
    files.map((file) => ({ file, kind: 'system-stats-monitor' })),
    monitorTypes().map((t) => t.configKind),
  );
  const registry = createRegistry();
  const clock = new FakeClock(T0);
  const deps = {
    clock,
    logger: silentLogger(),
    registry,
    problemMetrics: new ProblemMetrics(registry),
    paths,
  };
  const monitors = loaded.map((l) => type.create(l.config, deps) as SystemStatsMonitor);
  after(() => Promise.all(monitors.map((m) => m.stop())));
  const statuses: unknown[] = [];
  for (const m of monitors) {
    await m.start((s) => statuses.push(s));
    await m.idle();
  }
  return { monitors, registry, statuses };
}

const families = (text: string) =>
  new Set(
    text
      .split('\n')
      .filter((l) => l && !l.startsWith('#'))
      .map((l) => l.split(/[{ ]/)[0]),
  );

describe('system-stats monitor', () => {
  it("runs NPD's two shipped configs on a fake host and emits no status", async () => {
    const host = await fakeHost(fullHost());
    const files = ['system-stats-monitor.json', 'net-cgroup-system-stats-monitor.json'].map((f) =>
      join(FIXTURES, f),
    );
    const { monitors, registry, statuses } = await throughRegistry(files, host);
    assert.deepEqual(
      monitors.map((m) => m.source),
      ['system-stats-monitor', 'net-cgroup-system-stats-monitor'],
    );
    assert.deepEqual(statuses, []);
    const text = await registry.metrics();
    const got = families(text);
    for (const name of E2E_NAMES.filter((n) => n !== 'memory_percent_used')) assert.ok(got.has(name), name);
    // Not in NPD's shipped file, so not exported.
    assert.equal(got.has('memory_percent_used'), false);
    for (const name of ['system_cpu_stat', 'disk_io_time', 'net_rx_bytes', 'net_tx_compressed']) {
      assert.ok(got.has(name), name);
    }
    assert.match(text, /# TYPE cpu_usage_time counter/);
    assert.match(text, /# TYPE cpu_runnable_task_count gauge/);
    assert.match(text, /\nmemory_unevictable_used \d+\n/);
    assert.match(text, /system_os_feature\{os_feature="UnknownModules",value="mydriver,vendor_blob"\} 1/);
    assert.doesNotMatch(text, /interface_name="veth/);
    assert.ok(
      monitors.every((m) => m.health().healthy),
      monitors.map((m) => m.health().detail).join(),
    );
  });

  it('exports every name the NPD e2e test asserts when configured', async () => {
    const host = await fakeHost(fullHost());
    const all = (section: keyof typeof STATS_METRIC_IDS) => enable(...STATS_METRIC_IDS[section]);
    const config = statsConfig({
      cpu: all('cpu'),
      disk: { ...all('disk'), includeRootBlk: true, includeAllAttachedBlk: true },
      host: all('host'),
      memory: all('memory'),
      osFeature: all('osFeature'),
    });
    const h = harness(config, host);
    await h.start();
    const got = families(await h.registry.metrics());
    for (const name of E2E_NAMES) assert.ok(got.has(name), name);
    assert.deepEqual(await h.series('npd_system_stats_errors_total'), [
      'npd_system_stats_errors_total{collector="cpu"} 0',
      'npd_system_stats_errors_total{collector="disk"} 0',
      'npd_system_stats_errors_total{collector="host"} 0',
      'npd_system_stats_errors_total{collector="memory"} 0',
      'npd_system_stats_errors_total{collector="os-feature"} 1',
    ]);
    // The only error: no known-modules.json next to /etc/npd/system-stats.json.
    assert.match(h.monitor.health().detail ?? '', /^os-feature: known modules/);
  });

  it('collects once at start, then every invokeInterval', async () => {
    const host = await fakeHost({
      'proc/uptime': '100 1\n',
      'proc/sys/kernel/osrelease': '6.1\n',
      'etc/os-release': 'ID=debian\nVERSION="12 (bookworm)"\n',
    });
    const h = harness(statsConfig({ invokeInterval: '30s', host: enable('host/uptime') }), host);
    const uptime = async () => seriesValue(h, 'host_uptime', 'os_version="debian 12 (bookworm)"');
    await h.start();
    assert.equal(await uptime(), 100);
    await writeFiles(host.root, { 'proc/uptime': '130 1\n' });
    await h.advance(29_999);
    assert.equal(await uptime(), 100);
    await h.advance(1);
    assert.equal(await uptime(), 130);
    await writeFiles(host.root, { 'proc/uptime': '160 1\n' });
    await h.advance(30_000);
    assert.equal(await uptime(), 160);
  });

  it('resolves procPath below the host root', async () => {
    const host = await fakeHost({ 'hostproc/loadavg': '1.5 1 1 1/1 1\n' });
    const h = harness(statsConfig({ procPath: '/hostproc', cpu: enable('cpu/load_1m') }), host);
    await h.start();
    assert.equal(await seriesValue(h, 'cpu_load_1m'), 1.5);
  });

  it('reads the default procPath from --host-proc, and the mount table from the host root', async () => {
    const host = await fakeHost({ 'podproc/loadavg': '2.5 1 1 1/1 1\n' });
    const paths = hostPaths(host.root, join(host.root, 'podproc'));
    const h = harness(statsConfig({ cpu: enable('cpu/load_1m') }), paths);
    await h.start();
    assert.equal(await seriesValue(h, 'cpu_load_1m'), 2.5);
    assert.deepEqual(statsProcPaths(paths, '/proc'), {
      proc: join(host.root, 'podproc'),
      mountinfo: join(host.root, 'proc', '1', 'mountinfo'),
    });
    assert.deepEqual(statsProcPaths(paths, '/hostproc'), {
      proc: join(host.root, 'hostproc'),
      mountinfo: join(host.root, 'hostproc', '1', 'mountinfo'),
    });
  });

  it('stops its timer and unregisters its metrics on stop', async () => {
    const host = await fakeHost(fullHost());
    const h = harness(statsConfig({ cpu: enable('cpu/load_1m'), memory: enable('memory/bytes_used') }), host);
    await h.start();
    assert.equal(h.clock.pendingTimers(), 1);
    await h.monitor.stop();
    assert.equal(h.clock.pendingTimers(), 0);
    assert.equal(h.monitor.health().up, false);
    assert.equal(h.registry.getSingleMetric('cpu_load_1m'), undefined);
    assert.equal(h.registry.getSingleMetric('memory_bytes_used'), undefined);
    // Started again (the supervisor's retry, or a reload), it registers them afresh.
    await h.start();
    assert.equal(await seriesValue(h, 'cpu_load_1m'), 0.52);
  });

  it('keeps the monitor contract on a host that has none of its files', async () => {
    const host = await fakeHost({});
    const config = statsConfig({ cpu: enable('cpu/load_1m'), net: enable('net/rx_bytes') });
    const h = harness(config, host);
    const seen: unknown[] = [];
    await h.monitor.start((s) => seen.push(s));
    await h.monitor.idle();
    assert.equal(h.monitor.health().up, true);
    assert.equal(h.monitor.health().healthy, false);
    // Owning no conditions, it has no restore() for the agent to call.
    assert.equal('restore' in h.monitor, false);
    await h.monitor.stop();
    await h.monitor.stop();
    await h.advance(600_000);
    assert.deepEqual(seen, []);
    assert.equal(h.clock.pendingTimers(), 0);
  });

  it('creates no collector for a section without exported metrics', async () => {
    const host = await fakeHost({});
    const config: SystemStatsConfig = statsConfig({
      cpu: { metricsConfigs: { 'cpu/load_1m': { displayName: '' } } },
      invokeInterval: '10s',
    });
    const h = harness(config, host);
    await h.start();
    assert.deepEqual(await h.series('npd_system_stats_errors_total'), []);
    assert.deepEqual(await h.series('cpu_load_1m'), []);
    assert.equal(h.monitor.health().healthy, true);
  });
});
