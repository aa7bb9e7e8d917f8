import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, it } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import { systemClock } from '../../../../src/core/clock.ts';
import { silentLogger } from '../../../../src/core/logger.ts';
import { createRegistry } from '../../../../src/core/metrics.ts';
import type { Status } from '../../../../src/core/types.ts';
import { hostPaths } from '../../../../src/host/paths.ts';
import { ProblemMetrics } from '../../../../src/metrics/problem-metrics.ts';
import { START_FAILURE_MESSAGE } from '../../../../src/monitors/custom-plugin/exec.ts';
import { customPluginMonitorType } from '../../../../src/monitors/custom-plugin/monitor.ts';
import { fixture, hasPid, isDead, killQuietly, metric, pluginConfig, readPid } from './helpers.ts';

const tmp = mkdtempSync(join(tmpdir(), 'npd-plugin-monitor-'));
after(() => rmSync(tmp, { recursive: true, force: true }));

function deps() {
  const registry = createRegistry();
  return {
    clock: systemClock,
    logger: silentLogger(),
    registry,
    problemMetrics: new ProblemMetrics(registry),
    paths: hostPaths('/'),
  };
}

async function until(check: () => boolean, ms: number): Promise<boolean> {
  const deadline = Date.now() + ms;
  while (!check() && Date.now() < deadline) await sleep(20);
  return check();
}

describe('custom plugin monitor with real plugins', () => {
  it('turns real exit codes and start failures into conditions, events and metrics', {
    timeout: 15_000,
  }, async () => {
    const config = pluginConfig({
      pluginConfig: { invoke_interval: '1h' },
      conditions: [{ type: 'PluginProblem', reason: 'PluginIsFine', message: 'fine' }],
      rules: [
        {
          type: 'permanent',
          condition: 'PluginProblem',
          reason: 'PluginFailed',
          path: fixture('exit.sh'),
          args: ['1', 'broken'],
        },
        { type: 'temporary', reason: 'Missing', path: fixture('does-not-exist.sh') },
        { type: 'temporary', reason: 'NotExecutable', path: fixture('not-executable.sh') },
      ],
    });
    const d = deps();
    const monitor = customPluginMonitorType.create(config, d);
    const statuses: Status[] = [];
    await monitor.start((s) => statuses.push(s));
    assert.ok(await until(() => statuses.length === 4, 5000), `got ${statuses.length} statuses`);
    await monitor.stop();
    const last = statuses.at(-1)?.conditions[0];
    assert.equal(last?.status, 'True');
    assert.equal(last?.reason, 'PluginFailed');
    assert.equal(last?.message, 'broken');
    const events = statuses.flatMap((s) => s.events);
    assert.deepEqual(
      events.map((e) => e.reason),
      ['PluginFailed'],
      'start failures of temporary rules are no events',
    );
    assert.equal(await metric(d.registry, 'npd_plugin_errors_total', { reason: 'start' }), 2);
    assert.equal(
      await metric(d.registry, 'npd_plugin_runs_total', { rule: 'Missing', result: 'unknown' }),
      1,
    );
    assert.equal(
      await metric(d.registry, 'problem_gauge', { type: 'PluginProblem', reason: 'PluginFailed' }),
      1,
    );
    assert.notEqual(await metric(d.registry, 'npd_zombie_processes'), undefined);
  });

  it('reports a missing permanent plugin as Unknown with NPD start-failure message', {
    timeout: 15_000,
  }, async () => {
    const config = pluginConfig({
      conditions: [{ type: 'P', reason: 'POk', message: 'ok' }],
      rules: [{ type: 'permanent', condition: 'P', reason: 'PBad', path: './no/such/plugin' }],
    });
    const monitor = customPluginMonitorType.create(config, deps());
    const statuses: Status[] = [];
    await monitor.start((s) => statuses.push(s));
    assert.ok(await until(() => statuses.length === 2, 5000));
    await monitor.stop();
    const c = statuses[1]?.conditions[0];
    assert.deepEqual([c?.status, c?.reason, c?.message], ['Unknown', 'POk', START_FAILURE_MESSAGE]);
  });

  it('kills running plugins and their descendants on stop', { timeout: 15_000 }, async () => {
    const pidFile = join(tmp, 'stop.pid');
    const config = pluginConfig({
      pluginConfig: { timeout: '1m' },
      rules: [{ type: 'temporary', reason: 'Hangs', path: fixture('hang-with-child.sh'), args: [pidFile] }],
    });
    const monitor = customPluginMonitorType.create(config, deps());
    const statuses: Status[] = [];
    await monitor.start((s) => statuses.push(s));
    assert.ok(await until(() => hasPid(pidFile), 5000), 'the plugin started');
    const grandchild = readPid(pidFile);
    try {
      const started = Date.now();
      await monitor.stop();
      assert.ok(Date.now() - started < 3000, 'stop is bounded');
      assert.ok(await until(() => isDead(grandchild), 2000), 'the grandchild was killed with the group');
      assert.equal(statuses.length, 1, 'only the initial status; the cancelled run publishes nothing');
    } finally {
      killQuietly(grandchild);
    }
  });
});
