// Config input that is hostile or careless: files that are not regular files, oversized files, YAML
// alias bombs, filelog fields that only failed when the monitor was built, and NPD's empty durations.
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, symlinkSync, truncateSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { ConfigError, type ConfigIssue } from '../../../src/config/errors.ts';
import { loadConfigs, MAX_CONFIG_BYTES, readConfigFile } from '../../../src/config/load.ts';
import { customPluginConfigKind } from '../../../src/monitors/custom-plugin/schema.ts';
import { systemLogConfigKind, validateLogMonitor } from '../../../src/monitors/system-log/schema.ts';
import type { LogMonitorConfig } from '../../../src/rules/config.ts';

const KINDS = [systemLogConfigKind, customPluginConfigKind];
const KMSG = 'plugin: kmsg\nrules:\n  - type: temporary\n    reason: R\n    pattern: x\n';

function issuesOf(file: string): ConfigIssue[] {
  try {
    loadConfigs([{ file }], KINDS);
  } catch (err) {
    assert.ok(err instanceof ConfigError, `expected ConfigError, got ${String(err)}`);
    return [...err.issues];
  }
  assert.fail(`expected ${file} to be refused`);
}

function dir(): string {
  return mkdtempSync(join(tmpdir(), 'npd-config-limits-'));
}

describe('config reads are bounded', () => {
  it('refuses a character device, also behind a symlink, without reading it', () => {
    const link = join(dir(), 'zero.yaml');
    symlinkSync('/dev/zero', link);
    for (const file of ['/dev/zero', link]) {
      const [issue] = issuesOf(file);
      assert.equal(issue?.file, file);
      assert.match(issue?.message ?? '', /not a regular file \(character device\)/);
    }
  });

  it('refuses a FIFO at once instead of waiting for a writer', () => {
    const fifo = join(dir(), 'fifo.json');
    execFileSync('mkfifo', [fifo]);
    const [issue] = issuesOf(fifo);
    assert.equal(issue?.file, fifo);
    assert.match(issue?.message ?? '', /not a regular file \(FIFO\)/);
  });

  it('refuses a directory', () => {
    const d = join(dir(), 'conf.d.yaml');
    mkdirSync(d);
    assert.match(issuesOf(d)[0]?.message ?? '', /not a regular file \(directory\)/);
  });

  it(`refuses a file over ${MAX_CONFIG_BYTES} bytes, naming the limit`, () => {
    assert.equal(MAX_CONFIG_BYTES, 4 * 1024 * 1024);
    const file = join(dir(), 'huge.json');
    writeFileSync(file, '');
    truncateSync(file, 32 * 1024 * 1024);
    const [issue] = issuesOf(file);
    assert.equal(issue?.file, file);
    assert.match(issue?.message ?? '', /33554432 bytes; the limit is 4194304 bytes \(4 MiB\)/);
  });

  it('reads a regular file at the limit', () => {
    const file = join(dir(), 'big.yaml');
    writeFileSync(file, `${KMSG}${'#'.repeat(MAX_CONFIG_BYTES - KMSG.length - 1)}\n`);
    assert.equal(readConfigFile(file).length, MAX_CONFIG_BYTES);
    assert.equal(loadConfigs([{ file }], KINDS).length, 1);
  });
});

describe('YAML alias expansion is bounded', () => {
  it('reports an alias bomb as a config error naming the file', () => {
    const lines = ['a: &a ["x","x","x","x","x","x","x","x","x"]'];
    for (let i = 1; i < 9; i++) {
      const prev = String.fromCharCode(96 + i);
      const ref = `*${prev}`;
      lines.push(`${String.fromCharCode(97 + i)}: &${String.fromCharCode(97 + i)} [${Array(9).fill(ref)}]`);
    }
    const file = join(dir(), 'bomb.yaml');
    writeFileSync(file, `plugin: kmsg\nsource: bomb\nextra:\n${lines.map((l) => `  ${l}`).join('\n')}\n`);
    const issues = issuesOf(file);
    assert.equal(issues.length, 1, JSON.stringify(issues));
    assert.equal(issues[0]?.file, file);
    assert.match(issues[0]?.message ?? '', /alias/i);
  });
});

describe('filelog fields are checked by the schema', () => {
  const filelog = (extra: Record<string, unknown>) => ({
    plugin: 'filelog',
    logPath: '/var/log/x.log',
    pluginConfig: { timestamp: '^.{15}', message: '(.*)', timestampFormat: 'Jan _2 15:04:05' },
    ...extra,
  });

  it('an invalid message or timestamp regex names the field', () => {
    const pc = { timestamp: '^(.{15}', message: '(unclosed', timestampFormat: 'Jan _2 15:04:05' };
    const { issues } = validateLogMonitor(filelog({ pluginConfig: pc }), 'f.json');
    const byPath = new Map(issues.map((i) => [i.path, i.message]));
    assert.match(byPath.get('pluginConfig.message') ?? '<missing>', /invalid regex/);
    assert.match(byPath.get('pluginConfig.timestamp') ?? '<missing>', /invalid regex/);
    assert.equal(issues.length, 2, JSON.stringify(issues));
  });

  it('a missing logPath is an error for filelog only', () => {
    const { issues } = validateLogMonitor(filelog({ logPath: undefined }), 'f.json');
    assert.deepEqual(
      issues.map((i) => [i.path, i.message]),
      [['logPath', 'required by the filelog plugin']],
    );
    assert.deepEqual(validateLogMonitor({ plugin: 'kmsg' }, 'k.json').issues, []);
  });

  it('the shipped-style config still passes', () => {
    assert.deepEqual(validateLogMonitor(filelog({}), 'f.json').issues, []);
  });
});

describe('NPD compatibility', () => {
  it('an empty lookback or delay means 0, as in NPD', () => {
    const { config, issues } = validateLogMonitor({ plugin: 'kmsg', lookback: '', delay: '' }, 'k.json');
    assert.deepEqual(issues, []);
    assert.equal((config as LogMonitorConfig).lookbackMs, 0);
    assert.equal((config as LogMonitorConfig).delayMs, 0);
    const bad = validateLogMonitor({ plugin: 'kmsg', lookback: ' ' }, 'k.json');
    assert.deepEqual(
      bad.issues.map((i) => i.path),
      ['lookback'],
    );
  });
});
