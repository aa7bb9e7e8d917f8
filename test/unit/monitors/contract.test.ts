/**
 * The contract every monitor type in the registry keeps, whatever it watches: it starts without
 * throwing on a host that lacks what it watches, reports its own source, reports health, ignores
 * conditions it does not own, stops idempotently, and never emits after stop().
 */

import assert from 'node:assert/strict';
import { mkdirSync, mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { monitorTypes } from '../../../src/agent/registry.ts';
import { loadConfigs } from '../../../src/config/load.ts';
import { FakeClock } from '../../../src/core/clock.ts';
import { silentLogger } from '../../../src/core/logger.ts';
import { createRegistry } from '../../../src/core/metrics.ts';
import type { Status } from '../../../src/core/types.ts';
import { hostPaths } from '../../../src/host/paths.ts';
import { ProblemMetrics } from '../../../src/metrics/problem-metrics.ts';
import type { MonitorDeps } from '../../../src/monitors/deps.ts';

const root = mkdtempSync(join(tmpdir(), 'npd-contract-'));
mkdirSync(join(root, 'proc', 'sys', 'fs'), { recursive: true });
writeFileSync(join(root, 'proc', 'uptime'), '1000.00 2000.00\n');
writeFileSync(join(root, 'proc', 'sys', 'fs', 'file-nr'), '100\t0\t1000\n');
writeFileSync(join(root, 'app.log'), 'Jan  1 00:00:00 host kernel: [1.0] hello\n');

/** One minimal config per monitor type, in the files' own syntax. */
const CONFIGS: Readonly<Record<string, string>> = {
  'kmsg.yaml':
    'plugin: kmsg\nsource: contract-kmsg\nconditions: [{type: ContractKmsg, reason: OK, message: ok}]\nrules: []\n',
  'journald.yaml': `plugin: journald\nsource: contract-journal\nlogPath: ${join(root, 'no-journal')}\npluginConfig: {source: kernel}\n`,
  'filelog.yaml': [
    'plugin: filelog',
    'source: contract-file',
    `logPath: ${join(root, 'app.log')}`,
    'pluginConfig: {timestamp: "^.{15}", message: "kernel: \\\\[.*\\\\] (.*)", timestampFormat: "Jan _2 15:04:05"}',
  ].join('\n'),
  'plugin.json': JSON.stringify({
    plugin: 'custom',
    source: 'contract-plugin',
    pluginConfig: { invoke_interval: '10s', timeout: '5s' },
    conditions: [{ type: 'ContractPlugin', reason: 'OK', message: 'ok' }],
    rules: [{ type: 'permanent', condition: 'ContractPlugin', reason: 'Bad', path: '/bin/true' }],
  }),
  'probe.yaml': 'plugin: probe\nsource: contract-probe\nprobes: [{kind: fd, percent: 80}]\n',
  // No NVML library here (as on a node without NVIDIA's driver): the GPU monitor waits, with no condition.
  'gpu.yaml': `plugin: nvml\nsource: contract-gpu\nlibrary: ${join(root, 'no-libnvidia-ml.so.1')}\n`,
  'system-stats.json': JSON.stringify({
    host: { metricsConfigs: { 'host/uptime': { displayName: 'host/uptime' } } },
  }),
};

function deps(clock: FakeClock): MonitorDeps {
  const registry = createRegistry();
  return {
    clock,
    logger: silentLogger(),
    registry,
    problemMetrics: new ProblemMetrics(registry),
    paths: hostPaths(root),
  };
}

const settle = () => new Promise((r) => setTimeout(r, 20));

describe('monitor contract', () => {
  const kinds = monitorTypes().map((t) => t.configKind);
  const files = Object.entries(CONFIGS).map(([name, text]) => {
    const file = join(root, name);
    writeFileSync(file, text);
    return { file };
  });
  const loaded = loadConfigs(files, kinds);

  it('covers every registered monitor type', () => {
    const covered = new Set(loaded.map((l) => l.kind));
    for (const kind of kinds) {
      assert.ok(covered.has(kind.kind), `no contract config for ${kind.kind}`);
    }
  });

  for (const config of loaded) {
    it(`${config.kind} (${config.file.split('/').pop()}) keeps the contract`, async () => {
      const type = monitorTypes().find((t) => t.configKind.kind === config.kind);
      assert.ok(type);
      const clock = new FakeClock(Date.now());
      const monitor = type.create(config.config, deps(clock));
      const seen: Status[] = [];
      await monitor.start((s) => seen.push(s));
      clock.advance(1000);
      await settle();
      for (const s of seen) assert.equal(s.source, monitor.source);
      const h = monitor.health();
      assert.equal(typeof h.up, 'boolean');
      assert.equal(typeof h.healthy, 'boolean');
      const foreign = {
        type: 'NotOwnedByAnyone',
        status: 'True' as const,
        transition: 0,
        reason: 'X',
        message: 'x',
      };
      monitor.restore?.([foreign]);
      for (const s of seen) assert.ok(!s.conditions.some((c) => c.type === foreign.type));
      await monitor.stop();
      await monitor.stop();
      const count = seen.length;
      clock.advance(120_000);
      await settle();
      assert.equal(seen.length, count, 'no status after stop()');
    });
  }
});
