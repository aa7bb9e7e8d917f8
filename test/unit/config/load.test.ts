import assert from 'node:assert/strict';
import { readdirSync } from 'node:fs';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { ConfigError, type ConfigIssue, formatIssue, formatPath } from '../../../src/config/errors.ts';
import { loadConfigs, parseText } from '../../../src/config/load.ts';
import { customPluginConfigKind } from '../../../src/monitors/custom-plugin/schema.ts';
import { systemLogConfigKind, validateLogMonitor } from '../../../src/monitors/system-log/schema.ts';
import type { LogMonitorConfig } from '../../../src/rules/config.ts';

const KINDS = [systemLogConfigKind, customPluginConfigKind];
const NPD_DIR = join(import.meta.dirname, '../../fixtures/npd-config');

/** Loads in-memory files; returns the ConfigError's issues, or fails when loading succeeds. */
function loadErrors(files: Record<string, string | undefined>, kind?: string): ConfigIssue[] {
  try {
    loadConfigs(
      Object.keys(files).map((file) => (kind ? { file, kind } : { file })),
      KINDS,
      (f) => {
        const text = files[f];
        if (text === undefined) throw new Error(`ENOENT: ${f}`);
        return text;
      },
    );
  } catch (err) {
    assert.ok(err instanceof ConfigError, `expected ConfigError, got ${String(err)}`);
    assert.equal(err.message, err.issues.map(formatIssue).join('\n'));
    return [...err.issues];
  }
  assert.fail('expected loading to fail');
}

function loadOne(file: string, text: string): LogMonitorConfig {
  const [loaded] = loadConfigs([{ file, kind: 'system-log-monitor' }], KINDS, () => text);
  assert.ok(loaded);
  assert.equal(loaded.kind, 'system-log-monitor');
  return loaded.config as LogMonitorConfig;
}

function assertDeepFrozen(value: unknown, where = 'config'): void {
  if (value === null || typeof value !== 'object') return;
  assert.ok(Object.isFrozen(value), `${where} is not frozen`);
  for (const [k, v] of Object.entries(value)) assertDeepFrozen(v, `${where}.${k}`);
}

describe('config errors', () => {
  it('formats paths and issues as file: field.path: message', () => {
    assert.equal(formatPath(['rules', 3, 'pattern']), 'rules[3].pattern');
    assert.equal(formatPath(['pluginConfig', 'timestamp']), 'pluginConfig.timestamp');
    assert.equal(formatPath([]), '');
    assert.equal(
      formatIssue({ file: 'k.json', path: 'rules[0].reason', message: 'bad' }),
      'k.json: rules[0].reason: bad',
    );
    assert.equal(formatIssue({ file: 'k.json', path: '', message: 'bad' }), 'k.json: bad');
    const err = new ConfigError([
      { file: 'a', path: 'x', message: 'one' },
      { file: 'b', path: '', message: 'two' },
    ]);
    assert.equal(err.name, 'ConfigError');
    assert.equal(err.message, 'a: x: one\nb: two');
  });
});

describe('system-log-monitor validation', () => {
  it('reports every problem of a config at once, each with its field path', () => {
    const raw = {
      plugin: 'filelog',
      pluginConfig: { timestamp: '^.{15}', bogus: 'x' },
      lookback: '5',
      delay: '5x',
      bogusTop: 1,
      conditions: [
        { type: 'A', reason: 'r', message: 'm', clearAfter: 'soon' },
        { type: 'A', reason: 'r2', message: 'm' },
      ],
      rules: [
        { type: 'permanent', condition: 'Undeclared', reason: 'R', pattern: 'a(' },
        { type: 'temporary', reason: 'T', pattern: 'x', count: 3, extra: true },
        { type: 'temporary', reason: 'T', pattern: 'x', window: '1m' },
        { type: 'temporary', reason: 'T', pattern: 'x', count: 2, window: 'zz' },
      ],
    };
    const { config, issues } = validateLogMonitor(raw, 'k.json');
    assert.equal(config, undefined);
    const byPath = new Map(issues.map((i) => [i.path, i.message]));
    assert.ok(issues.every((i) => i.file === 'k.json'));
    const expected: [string, RegExp][] = [
      ['lookback', /invalid duration "5"/],
      ['delay', /invalid duration "5x"/],
      ['conditions[0].clearAfter', /invalid duration "soon"/],
      ['rules[3].window', /invalid duration "zz"/],
      ['rules[0].pattern', /^invalid regex: .*missing.*\)/],
      ['bogusTop', /^unknown key$/],
      ['rules[1].extra', /^unknown key$/],
      ['pluginConfig.bogus', /unknown key for plugin "filelog"/],
      ['pluginConfig.message', /required by the filelog plugin/],
      ['pluginConfig.timestampFormat', /required by the filelog plugin/],
      ['logPath', /required by the filelog plugin/],
      ['conditions[1].type', /condition "A" is declared twice/],
      ['rules[0].condition', /condition "Undeclared" is not declared in conditions/],
      ['rules[1].window', /count and window go together/],
      ['rules[2].count', /count and window go together/],
    ];
    for (const [path, re] of expected) assert.match(byPath.get(path) ?? '<missing>', re, path);
    assert.equal(issues.length, expected.length, JSON.stringify(issues, null, 1));
  });

  it('takes severity info or warn on temporary rules only, naming the field otherwise', () => {
    const ok = validateLogMonitor(
      { plugin: 'kmsg', rules: [{ type: 'temporary', reason: 'T', pattern: 'x', severity: 'info' }] },
      'k.yaml',
    );
    assert.deepEqual(ok.issues, []);
    assert.equal(ok.config?.rules[0]?.severity, 'info');
    const { issues } = validateLogMonitor(
      {
        plugin: 'kmsg',
        conditions: [{ type: 'A', reason: 'r', message: 'm' }],
        rules: [
          { type: 'temporary', reason: 'T', pattern: 'x', severity: 'Normal' },
          { type: 'permanent', condition: 'A', reason: 'P', pattern: 'y', severity: 'info' },
        ],
      },
      'k.yaml',
    );
    assert.deepEqual(
      issues.map((i) => i.path),
      ['rules[0].severity', 'rules[1].severity'],
    );
    assert.match(issues[1]?.message ?? '', /only temporary rules have a severity/);
  });

  it('reports an unknown plugin together with the other problems', () => {
    const { issues } = validateLogMonitor(
      { plugin: 'kmsgx', lookback: 'x', rules: [{ type: 'weird' }] },
      'k.json',
    );
    const paths = issues.map((i) => i.path);
    assert.ok(paths.includes('plugin'));
    assert.ok(paths.includes('lookback'));
    assert.ok(paths.includes('rules[0].type'));
    assert.ok(paths.includes('rules[0].reason'));
    assert.ok(paths.includes('rules[0].pattern'));
  });

  it('rejects negative durations and a revertPattern without count/window', () => {
    const { issues } = validateLogMonitor(
      {
        plugin: 'kmsg',
        lookback: '-5m',
        conditions: [{ type: 'C', reason: 'ok', message: 'fine' }],
        rules: [{ type: 'permanent', condition: 'C', reason: 'R', pattern: 'x', revertPattern: 'y' }],
      },
      'k.json',
    );
    assert.deepEqual(
      issues.map((i) => i.path),
      ['lookback', 'rules[0].revertPattern'],
    );
  });

  it('applies NPD defaults and freezes the result deeply', () => {
    const config = loadOne(
      'k.json',
      JSON.stringify({ plugin: 'kmsg', rules: [{ type: 'temporary', reason: 'R', pattern: 'x' }] }),
    );
    assert.equal(config.bufferSize, 10);
    assert.equal(config.lookbackMs, 0);
    assert.equal(config.delayMs, 0);
    assert.equal(config.metricsReporting, true);
    assert.equal(config.logPath, '');
    assert.equal(config.source, '');
    assert.deepEqual(config.pluginConfig, {});
    assert.deepEqual(config.skipList, []);
    assert.deepEqual(config.conditions, []);
    assertDeepFrozen(config);
  });

  it("loads NPD's shipped system-log-monitor configs unchanged", () => {
    const files = readdirSync(NPD_DIR).filter((f) => f.endsWith('.json') && !f.includes('-counter'));
    assert.ok(files.length >= 8);
    const loaded = loadConfigs(
      files.map((f) => ({ file: join(NPD_DIR, f), kind: 'system-log-monitor' })),
      KINDS,
    );
    assert.equal(loaded.length, files.length);
    const kernel = loaded.find((l) => l.file.endsWith('/kernel-monitor.json'))?.config as LogMonitorConfig;
    assert.equal(kernel.lookbackMs, 300_000);
    assert.equal(kernel.source, 'kernel-monitor');
    assert.equal(kernel.rules.length, 14);
    assert.equal(kernel.rules.at(-1)?.pattern, 'task docker:\\w+ blocked for more than \\w+ seconds\\.');
  });
});

describe('loadConfigs', () => {
  const JSON_TEXT = JSON.stringify({
    plugin: 'kmsg',
    lookback: '5m',
    bufferSize: 20,
    source: 'kernel-monitor',
    conditions: [
      { type: 'KernelDeadlock', reason: 'KernelHasNoDeadlock', message: 'kernel has no deadlock' },
    ],
    rules: [
      { type: 'temporary', reason: 'OOMKilling', pattern: 'Killed process \\d+ (.+) total-vm:\\d+kB.*' },
      {
        type: 'permanent',
        condition: 'KernelDeadlock',
        reason: 'DockerHung',
        pattern: 'task docker:\\w+ blocked for more than \\w+ seconds\\.',
      },
    ],
  });
  const YAML_TEXT = `# same config, as YAML
plugin: kmsg
lookback: 5m
bufferSize: 20
source: kernel-monitor
conditions:
  - type: KernelDeadlock
    reason: KernelHasNoDeadlock
    message: kernel has no deadlock
rules:
  - type: temporary
    reason: OOMKilling
    pattern: 'Killed process \\d+ (.+) total-vm:\\d+kB.*'
  - type: permanent
    condition: KernelDeadlock
    reason: DockerHung
    pattern: 'task docker:\\w+ blocked for more than \\w+ seconds\\.'
`;

  it('gives deep-equal frozen configs for a YAML file and the equivalent JSON', () => {
    const fromJson = loadOne('k.json', JSON_TEXT);
    const fromYaml = loadOne('k.yaml', YAML_TEXT);
    assertDeepFrozen(fromJson);
    assertDeepFrozen(fromYaml);
    assert.equal(fromJson.file, 'k.json');
    assert.equal(fromYaml.file, 'k.yaml');
    assert.deepEqual({ ...fromYaml, file: '' }, { ...fromJson, file: '' });
    assert.equal(fromYaml.rules[1]?.pattern, 'task docker:\\w+ blocked for more than \\w+ seconds\\.');
    assert.equal(fromYaml.lookbackMs, 300_000);
  });

  it('reports YAML syntax errors with their line number', () => {
    const issues = loadErrors({ 'a.yaml': 'plugin: kmsg\nrules:\n  - type: temporary\n   reason: x\n' });
    assert.equal(issues.length, 1);
    assert.equal(issues[0]?.file, 'a.yaml');
    assert.match(issues[0]?.path ?? '', /^line 4:\d+$/);
  });

  it('reports duplicate YAML keys with their line number', () => {
    const issues = loadErrors({ 'a.yml': 'plugin: kmsg\nplugin: kmsg\n' });
    assert.match(issues[0]?.path ?? '', /^line 2:\d+$/);
    assert.match(issues[0]?.message ?? '', /unique/i);
  });

  it('reports JSON syntax errors', () => {
    const issues = loadErrors({ 'b.json': '{"plugin": "kmsg",}' });
    assert.equal(issues.length, 1);
    assert.equal(issues[0]?.path, '');
    assert.match(issues[0]?.message ?? '', /^invalid JSON: /);
    assert.deepEqual(parseText('x.json', '[1]'), { value: [1], issues: [] });
  });

  it('collects the problems of every file before failing', () => {
    const issues = loadErrors({
      'a.yaml': 'plugin: [\n',
      'b.json': JSON.stringify({ plugin: 'nope' }),
      'c.json': JSON.stringify({
        plugin: 'kmsg',
        lookback: 'x',
        rules: [{ type: 'temporary', reason: 'R', pattern: '(' }],
      }),
      'd.json': '"just a string"',
      'e.json': JSON.stringify({ rules: [] }),
      'missing.json': undefined,
    });
    const lines = issues.map(formatIssue);
    assert.ok(lines.some((l) => l.startsWith('a.yaml: line ')));
    assert.ok(
      lines.some((l) =>
        /^b\.json: plugin: unknown plugin "nope"; one of: kmsg, journald, filelog, custom$/.test(l),
      ),
    );
    assert.ok(lines.some((l) => /^c\.json: lookback: invalid duration "x"/.test(l)));
    assert.ok(lines.some((l) => /^c\.json: rules\[0\]\.pattern: invalid regex/.test(l)));
    assert.ok(lines.includes('d.json: expected an object at the top level'));
    assert.ok(lines.some((l) => /^e\.json: plugin: required/.test(l)));
    assert.ok(lines.some((l) => /^missing\.json: cannot read: ENOENT/.test(l)));
  });

  it('rejects a custom plugin config passed with --config.system-log-monitor', () => {
    const text = JSON.stringify({
      plugin: 'custom',
      rules: [{ type: 'temporary', reason: 'R', path: '/bin/true' }],
    });
    const issues = loadErrors({ 'cpm.json': text }, 'system-log-monitor');
    assert.deepEqual(issues, [
      {
        file: 'cpm.json',
        path: 'plugin',
        message: 'this is a custom-plugin-monitor config; pass it with --config.custom-plugin-monitor',
      },
    ]);
  });

  it('picks the kind from the plugin when none is expected', () => {
    const [loaded] = loadConfigs([{ file: 'k.json' }], KINDS, () => JSON_TEXT);
    assert.equal(loaded?.kind, 'system-log-monitor');
  });
});
