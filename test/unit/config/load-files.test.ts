import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { formatIssue } from '../../../src/config/errors.ts';
import { loadConfigs, parseText } from '../../../src/config/load.ts';
import { assertDeepFrozen, KINDS, loadErrors, loadOne } from './helpers.ts';

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
