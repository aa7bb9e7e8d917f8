import assert from 'node:assert/strict';
import { readdirSync } from 'node:fs';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { ConfigError, formatIssue, formatPath } from '../../../src/config/errors.ts';
import { loadConfigs } from '../../../src/config/load.ts';
import { validateLogMonitor } from '../../../src/monitors/system-log/schema.ts';
import type { LogMonitorConfig } from '../../../src/rules/config.ts';
import { assertDeepFrozen, KINDS, loadOne, NPD_DIR } from './helpers.ts';

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
