import assert from 'node:assert/strict';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { monitorTypes } from '../../../../src/agent/registry.ts';
import { ConfigError } from '../../../../src/config/errors.ts';
import { loadConfigs } from '../../../../src/config/load.ts';
import {
  STATS_METRIC_IDS,
  type SystemStatsConfig,
  validateSystemStats,
} from '../../../../src/monitors/system-stats/schema.ts';
import { enable, FIXTURES, statsConfig } from './helpers.ts';

const kinds = () => monitorTypes().map((t) => t.configKind);

function issuesOf(raw: unknown): string[] {
  return validateSystemStats(raw, 'stats.json').issues.map((i) => `${i.path}: ${i.message}`);
}

describe('system-stats config: NPD shipped files', () => {
  it('loads system-stats-monitor.json unchanged, with and without the flag', () => {
    const file = join(FIXTURES, 'system-stats-monitor.json');
    for (const kind of ['system-stats-monitor', undefined]) {
      const [loaded] = loadConfigs([{ file, ...(kind ? { kind } : {}) }], kinds());
      assert.equal(loaded?.kind, 'system-stats-monitor');
      const c = loaded?.config as SystemStatsConfig;
      assert.equal(c.invokeIntervalMs, 60_000);
      assert.equal(c.procPath, '/proc');
      assert.equal(c.source, 'system-stats-monitor');
      assert.equal(c.cpu.metrics['cpu/runnable_task_count'], 'cpu_runnable_task_count');
      assert.equal(c.cpu.metrics['system/cpu_stat'], 'system_cpu_stat');
      assert.equal(Object.keys(c.disk.metrics).length, STATS_METRIC_IDS.disk.length);
      assert.deepEqual(
        [c.disk.includeRootBlk, c.disk.includeAllAttachedBlk, c.disk.lsblkTimeoutMs],
        [true, true, 5000],
      );
      assert.equal(c.host.metrics['host/uptime'], 'host_uptime');
      assert.equal(c.osFeature.metrics['system/os_feature'], 'system_os_feature');
      // "KnownModulesConfigPath" (capitalised in NPD's file) resolves next to the config file.
      assert.equal(c.osFeature.knownModulesPath, join(FIXTURES, 'guestosconfig/known-modules.json'));
      assert.deepEqual(c.net.metrics, {});
    }
  });

  it('loads net-cgroup-system-stats-monitor.json unchanged', () => {
    const file = join(FIXTURES, 'net-cgroup-system-stats-monitor.json');
    const [loaded] = loadConfigs([{ file, kind: 'system-stats-monitor' }], kinds());
    const c = loaded?.config as SystemStatsConfig;
    assert.equal(c.invokeIntervalMs, 120_000);
    assert.equal(c.net.excludeInterfaceRegexp, '^(cali|tunl|veth)');
    assert.equal(Object.keys(c.net.metrics).length, 16);
    assert.equal(c.net.metrics['net/tx_carrier'], 'net_tx_carrier');
  });

  it('rejects a system-stats file passed as another monitor kind', () => {
    const file = join(FIXTURES, 'system-stats-monitor.json');
    assert.throws(
      () => loadConfigs([{ file, kind: 'system-log-monitor' }], kinds()),
      (err: unknown) => err instanceof ConfigError && /--config.system-stats-monitor/.test(err.message),
    );
  });
});

describe('system-stats config: fields', () => {
  it('applies NPD defaults', () => {
    const c = statsConfig({ host: enable('host/uptime') }, '/cfg/stats.yaml');
    assert.equal(c.invokeIntervalMs, 60_000);
    assert.equal(c.procPath, '/proc');
    assert.equal(c.disk.lsblkTimeoutMs, 5000);
    assert.equal(c.osFeature.knownModulesPath, '/cfg/guestosconfig/known-modules.json');
    assert.equal(c.net.excludeInterfaceRegexp, '');
    assert.ok(Object.isFrozen(c.host.metrics));
  });

  it('accepts the lower-case knownModulesConfigPath and absolute paths', () => {
    const c = statsConfig({ osFeature: { knownModulesConfigPath: '/etc/known.json' } });
    assert.equal(c.osFeature.knownModulesPath, '/etc/known.json');
    assert.deepEqual(issuesOf({ osFeature: { knownModulesConfigPath: 'a', KnownModulesConfigPath: 'b' } }), [
      'osFeature.KnownModulesConfigPath: give knownModulesConfigPath only once',
    ]);
  });

  it('exports only metrics with a non-empty displayName, named with / replaced by _', () => {
    const c = statsConfig({
      memory: {
        metricsConfigs: {
          'memory/bytes_used': { displayName: 'node/memory/used' },
          'memory/dirty_used': { displayName: '' },
        },
      },
    });
    assert.deepEqual(c.memory.metrics, { 'memory/bytes_used': 'node_memory_used' });
  });

  it('names the field of an unknown metric ID', () => {
    const issues = issuesOf({ cpu: enable('cpu/load_2m'), memory: enable('cpu/load_1m') });
    assert.equal(issues.length, 2);
    assert.match(
      issues[0] ?? '',
      /^cpu\.metricsConfigs\.cpu\/load_2m: unknown metric ID; one of: cpu\/runnable_task_count/,
    );
    assert.match(issues[1] ?? '', /^memory\.metricsConfigs\.cpu\/load_1m: unknown metric ID/);
  });

  it('reports bad values with their field paths', () => {
    assert.deepEqual(issuesOf({ invokeInterval: '0s' }), ['invokeInterval: must be above 0s']);
    assert.match(issuesOf({ invokeInterval: 'soon' })[0] ?? '', /^invokeInterval: /);
    assert.deepEqual(issuesOf({ invokeInterval: '3s', disk: { lsblkTimeout: '5s' } }), [
      'disk.lsblkTimeout: must not be longer than invokeInterval (NPD rejects it)',
    ]);
    assert.match(
      issuesOf({ net: { excludeInterfaceRegexp: '(' } })[0] ?? '',
      /^net\.excludeInterfaceRegexp: invalid regex/,
    );
    assert.deepEqual(issuesOf({ procPath: 'proc' }), ['procPath: must be an absolute path']);
    assert.deepEqual(issuesOf({ cpu: { metricsConfigs: {}, extra: 1 } }), ['cpu.extra: unknown key']);
    assert.deepEqual(issuesOf({ cpu: { metricsConfigs: { 'cpu/load_1m': { displayName: 'load 1m' } } } }), [
      'cpu.metricsConfigs.cpu/load_1m.displayName: "load 1m" does not make a valid Prometheus metric name',
    ]);
  });

  it('rejects two metrics exported under one name', () => {
    const raw = {
      cpu: { metricsConfigs: { 'cpu/load_1m': { displayName: 'load' } } },
      host: { metricsConfigs: { 'host/uptime': { displayName: 'load' } } },
    };
    assert.deepEqual(issuesOf(raw), [
      'host.metricsConfigs.host/uptime.displayName: exports the same Prometheus name "load" as cpu/load_1m',
    ]);
  });

  it('is recognised without a plugin field only by its own keys', () => {
    const kind = monitorTypes().find((t) => t.configKind.kind === 'system-stats-monitor')?.configKind;
    assert.equal(kind?.matchesWithoutPlugin?.({ invokeInterval: '60s' }), true);
    assert.equal(kind?.matchesWithoutPlugin?.({ net: {} }), true);
    assert.equal(kind?.matchesWithoutPlugin?.({ rules: [] }), false);
  });

  it('loads the same config written as YAML', () => {
    const yaml =
      'invokeInterval: 30s\nmemory:\n  metricsConfigs:\n    memory/bytes_used: {displayName: memory/bytes_used}\n';
    const [loaded] = loadConfigs([{ file: 'stats.yaml' }], kinds(), () => yaml);
    const c = loaded?.config as SystemStatsConfig;
    assert.equal(c.invokeIntervalMs, 30_000);
    assert.deepEqual(c.memory.metrics, { 'memory/bytes_used': 'memory_bytes_used' });
  });
});
