import assert from 'node:assert/strict';
import { readdirSync } from 'node:fs';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { monitorTypes } from '../../../../src/agent/registry.ts';
import { ConfigError } from '../../../../src/config/errors.ts';
import { loadConfigs } from '../../../../src/config/load.ts';
import {
  customPluginConfigKind,
  type PluginMonitorConfig,
  resolveCommand,
  validatePluginMonitor,
} from '../../../../src/monitors/custom-plugin/schema.ts';
import { systemLogConfigKind } from '../../../../src/monitors/system-log/schema.ts';
import { FIXTURES } from './helpers.ts';

const NPD_DIR = join(FIXTURES, 'npd-config');
const kinds = [systemLogConfigKind, customPluginConfigKind];

function issuesOf(raw: unknown): string[] {
  return validatePluginMonitor(raw, 'm.json', '/etc/npd').issues.map((i) => `${i.path}: ${i.message}`);
}

const minimalRule = { type: 'temporary', reason: 'R', path: '/bin/true' };

describe('custom-plugin-monitor schema', () => {
  it('applies NPD defaults and our splay default', () => {
    const { config } = validatePluginMonitor({ plugin: 'custom', rules: [minimalRule] }, 'm.json', '/');
    assert.ok(config);
    assert.equal(config.invokeIntervalMs, 30_000);
    assert.equal(config.timeoutMs, 5_000);
    assert.equal(config.maxOutputLength, 80);
    assert.equal(config.concurrency, 3);
    assert.equal(config.messageChangeUpdates, false);
    assert.equal(config.skipInitialStatus, false);
    assert.equal(config.splayMs, 0);
    assert.equal(config.metricsReporting, true);
    assert.equal(config.source, '');
    assert.deepEqual(config.rules[0], {
      type: 'temporary',
      condition: undefined,
      reason: 'R',
      path: '/bin/true',
      command: '/bin/true',
      args: [],
      timeoutMs: 5_000,
      invokeIntervalMs: 30_000,
    });
    assert.ok(Object.isFrozen(config.rules[0]));
  });

  it('gives each rule its own timeout and interval when set, the global ones otherwise', () => {
    const { config } = validatePluginMonitor(
      {
        plugin: 'custom',
        pluginConfig: { invoke_interval: '1m', timeout: '10s', splay: '5s' },
        rules: [minimalRule, { ...minimalRule, timeout: '2s', invoke_interval: '5m' }],
      },
      'm.json',
      '/',
    );
    assert.ok(config);
    assert.deepEqual(
      config.rules.map((r) => [r.timeoutMs, r.invokeIntervalMs]),
      [
        [10_000, 60_000],
        [2_000, 300_000],
      ],
    );
    assert.equal(config.splayMs, 5_000);
  });

  it('resolves relative paths against the working directory like NPD, not the config file', () => {
    assert.equal(resolveCommand('./config/plugin/check_ntp.sh', '/'), '/config/plugin/check_ntp.sh');
    assert.equal(resolveCommand('plugins/x.sh', '/opt/npd'), '/opt/npd/plugins/x.sh');
    assert.equal(resolveCommand('/usr/bin/x', '/opt/npd'), '/usr/bin/x');
    // A bare name is left to PATH lookup at spawn time, as Go's exec.Command does.
    assert.equal(resolveCommand('check', '/opt/npd'), 'check');
  });

  it('reports a permanent rule whose condition is missing or undeclared', () => {
    assert.deepEqual(
      issuesOf({
        plugin: 'custom',
        conditions: [{ type: 'A', reason: 'AOk', message: 'fine' }],
        rules: [
          { type: 'permanent', reason: 'R', path: '/x' },
          { type: 'permanent', condition: 'B', reason: 'R', path: '/x' },
          { type: 'permanent', condition: 'A', reason: 'R', path: '/x' },
        ],
      }),
      [
        'rules[0].condition: a permanent rule needs a condition',
        'rules[1].condition: condition "B" is not declared in conditions',
      ],
    );
  });

  it('rejects a rule timeout above the global timeout, including the default one', () => {
    assert.deepEqual(
      issuesOf({
        plugin: 'custom',
        pluginConfig: { timeout: '3s' },
        rules: [
          { ...minimalRule, timeout: '3s' },
          { ...minimalRule, timeout: '4s' },
        ],
      }),
      ['rules[1].timeout: 4s exceeds pluginConfig.timeout 3s'],
    );
    assert.deepEqual(issuesOf({ plugin: 'custom', rules: [{ ...minimalRule, timeout: '6s' }] }), [
      'rules[0].timeout: 6s exceeds pluginConfig.timeout 5s (default)',
    ]);
  });

  it('reports unknown keys at every level with their field path', () => {
    assert.deepEqual(
      issuesOf({
        plugin: 'custom',
        pluginConfig: { invoke_interval: '30s', invokeInterval: '30s' },
        extra: 1,
        conditions: [{ type: 'A', reason: 'AOk', message: 'm', clearAfter: '1m' }],
        rules: [{ ...minimalRule, pattern: 'x' }],
      }).sort(),
      [
        'conditions[0].clearAfter: unknown key',
        'extra: unknown key',
        'pluginConfig.invokeInterval: unknown key',
        'rules[0].pattern: unknown key',
      ],
    );
  });

  it('rejects zero intervals and timeouts, bad durations, and non-positive sizes', () => {
    const issues = issuesOf({
      plugin: 'custom',
      pluginConfig: {
        invoke_interval: '0',
        timeout: '0s',
        max_output_length: 0,
        concurrency: 0,
        splay: 'soon',
      },
      rules: [{ ...minimalRule, invoke_interval: '0' }],
    });
    const paths = issues.map((i) => i.split(':')[0]).sort();
    assert.deepEqual(paths, [
      'pluginConfig.concurrency',
      'pluginConfig.invoke_interval',
      'pluginConfig.max_output_length',
      'pluginConfig.splay',
      'pluginConfig.timeout',
      'rules[0].invoke_interval',
    ]);
  });

  it('reports a condition declared twice', () => {
    const c = { type: 'A', reason: 'AOk', message: 'm' };
    assert.deepEqual(issuesOf({ plugin: 'custom', conditions: [c, c] }), [
      'conditions[1].type: condition "A" is declared twice',
    ]);
  });

  it('does not require the executable to exist', () => {
    assert.deepEqual(
      issuesOf({ plugin: 'custom', rules: [{ ...minimalRule, path: '/nonexistent/plugin' }] }),
      [],
    );
  });

  it('is registered as a monitor type for plugin "custom"', () => {
    const type = monitorTypes().find((t) => t.configKind.kind === 'custom-plugin-monitor');
    assert.ok(type);
    assert.deepEqual(type.configKind.plugins, ['custom']);
  });
});

describe("NPD's shipped custom-plugin configs", () => {
  const files = readdirSync(NPD_DIR)
    .filter((f) => f.endsWith('.json'))
    .sort();

  it('are all present', () => {
    assert.deepEqual(files, [
      'custom-plugin-monitor.json',
      'docker-monitor-counter.json',
      'health-checker-containerd.json',
      'health-checker-docker.json',
      'health-checker-kubelet.json',
      'iptables-mode-monitor.json',
      'kernel-monitor-counter.json',
      'network-problem-monitor.json',
      'systemd-monitor-counter.json',
    ]);
  });

  it('load unchanged through loadConfigs, although their plugin paths do not exist here', () => {
    const loaded = loadConfigs(
      files.map((f) => ({ file: join(NPD_DIR, f), kind: 'custom-plugin-monitor' })),
      kinds,
    );
    assert.equal(loaded.length, files.length);
    const byName = new Map(
      loaded.map((l) => [l.file.slice(NPD_DIR.length + 1), l.config as PluginMonitorConfig]),
    );
    const ntp = byName.get('custom-plugin-monitor.json');
    assert.ok(ntp);
    assert.equal(ntp.source, 'ntp-custom-plugin-monitor');
    assert.deepEqual(
      ntp.rules.map((r) => [r.type, r.condition, r.reason, r.path, r.timeoutMs, r.invokeIntervalMs]),
      [
        ['temporary', undefined, 'NTPIsDown', './config/plugin/check_ntp.sh', 3_000, 30_000],
        ['permanent', 'NTPProblem', 'NTPIsDown', './config/plugin/check_ntp.sh', 3_000, 30_000],
      ],
    );
    assert.equal(ntp.rules[0]?.command, join(process.cwd(), 'config/plugin/check_ntp.sh'));
    const counter = byName.get('kernel-monitor-counter.json');
    assert.equal(
      counter?.rules[0]?.args.at(-1),
      '--pattern=unregister_netdevice: waiting for \\w+ to become free. Usage count = \\d+',
    );
    assert.equal(byName.get('iptables-mode-monitor.json')?.invokeIntervalMs, 86_400_000);
    assert.equal(byName.get('health-checker-kubelet.json')?.timeoutMs, 180_000);
    assert.equal(byName.get('docker-monitor-counter.json')?.metricsReporting, true);
    assert.equal(byName.get('systemd-monitor-counter.json')?.rules.length, 3);
  });

  it('reports a log config passed as a custom plugin config', () => {
    const read = () => JSON.stringify({ plugin: 'kmsg' });
    assert.throws(
      () => loadConfigs([{ file: 'k.json', kind: 'custom-plugin-monitor' }], kinds, read),
      (err: unknown) =>
        err instanceof ConfigError && /pass it with --config.system-log-monitor/.test(err.message),
    );
  });
});
