// Every config and flag error, on the real agent process: exit 2, the file and field (or the flag) named,
// no stack trace, and nothing read that can hang or grow without bound.
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { mkdtempSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { runAgentToExit } from '../support/agent-process.ts';

const dir = mkdtempSync(join(tmpdir(), 'npd-config-errors-'));

async function refused(args: readonly string[], ...expected: RegExp[]): Promise<void> {
  const { code, stderr } = await runAgentToExit(args);
  assert.equal(code, 2, stderr);
  for (const re of expected) assert.match(stderr, re);
  assert.doesNotMatch(stderr, /^\s+at /m, 'no stack trace');
}

const monitor = (file: string) => [`--config.system-log-monitor=${file}`, '--enable-k8s-exporter=false'];
const esc = (s: string) => s.replaceAll(/[.*+?^${}()|[\]\\/]/g, '\\$&');

describe('config errors exit 2 naming the file', () => {
  it('a FIFO and a symlink to /dev/zero are refused at once', async () => {
    const fifo = join(dir, 'fifo.json');
    execFileSync('mkfifo', [fifo]);
    await refused(monitor(fifo), new RegExp(`${esc(fifo)}: cannot read: not a regular file \\(FIFO\\)`));
    const zero = join(dir, 'zero.json');
    symlinkSync('/dev/zero', zero);
    await refused(monitor(zero), new RegExp(`${esc(zero)}: .*not a regular file \\(character device\\)`));
  });

  it('a 32 MB config with 2M skip-list entries is refused by size', async () => {
    const file = join(dir, 'skiplist.json');
    const entries = Array.from({ length: 2_000_000 }, (_, i) => `s${i}`);
    writeFileSync(file, JSON.stringify({ plugin: 'kmsg', skipList: entries }));
    await refused(monitor(file), new RegExp(`${esc(file)}: .*the limit is 4194304 bytes \\(4 MiB\\)`));
  });

  it('a YAML alias bomb names the file', async () => {
    const levels = ['a: &a [x, x, x, x, x, x, x, x, x]'];
    for (let i = 1; i < 9; i++) {
      const [prev, name] = [String.fromCharCode(96 + i), String.fromCharCode(97 + i)];
      levels.push(`${name}: &${name} [${Array(9).fill(`*${prev}`).join(', ')}]`);
    }
    const file = join(dir, 'bomb.yaml');
    writeFileSync(file, `plugin: kmsg\nbomb:\n${levels.map((l) => `  ${l}`).join('\n')}\n`);
    await refused(monitor(file), new RegExp(`${esc(file)}: YAML aliases expand too far`));
  });

  it('a filelog config without logPath and with a bad message regex names both fields', async () => {
    const file = join(dir, 'filelog.json');
    const pluginConfig = { timestamp: '^.{15}', message: '(unclosed', timestampFormat: 'Jan _2 15:04:05' };
    writeFileSync(file, JSON.stringify({ plugin: 'filelog', pluginConfig }));
    await refused(
      monitor(file),
      new RegExp(`${esc(file)}: pluginConfig\\.message: invalid regex`),
      new RegExp(`${esc(file)}: logPath: required by the filelog plugin`),
    );
  });
});

describe('flag errors exit 2 naming the flag', () => {
  it('--port=99999, --address=not-an-ip and --config-reload-period=-5s', async () => {
    const file = join(dir, 'ok.yaml');
    writeFileSync(file, 'plugin: kmsg\n');
    await refused(
      [...monitor(file), '--port=99999', '--address=not-an-ip', '--config-reload-period=-5s'],
      /--port: 99999 is not a port number/,
      /--address: "not-an-ip" is not an IP address/,
      /--config-reload-period: duration "-5s" must not be negative/,
    );
  });
});
