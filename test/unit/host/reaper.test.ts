import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { readdir, readFile } from 'node:fs/promises';
import { describe, it } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import pino from 'pino';
import { createRegistry } from '../../../src/core/metrics.ts';
import { findZombies, type ProcFs, parseProcStat, watchZombies } from '../../../src/host/procfs/reaper.ts';
import { metric } from '../monitors/custom-plugin/helpers.ts';

/** A /proc made of stat lines. */
function fakeProc(stats: Record<string, string>): ProcFs {
  return {
    readdir: async () => [...Object.keys(stats), 'self', 'meminfo'],
    readFile: async (path) => {
      const pid = path.split('/')[2] ?? '';
      const text = stats[pid];
      if (text === undefined) throw Object.assign(new Error('gone'), { code: 'ENOENT' });
      return text;
    },
  };
}

/** Collects warn-level log messages. */
function recordingLogger() {
  const lines: string[] = [];
  const logger = pino({ level: 'warn' }, { write: (line: string) => lines.push(JSON.parse(line).msg) });
  return { logger, lines };
}

describe('zombie detection', () => {
  it('parses /proc/<pid>/stat even when comm holds spaces and parentheses', () => {
    assert.deepEqual(parseProcStat('4242 (my (odd) proc) Z 1 4242 4242 0 -1 4194564'), {
      pid: 4242,
      comm: 'my (odd) proc',
      state: 'Z',
      ppid: 1,
    });
    assert.equal(parseProcStat('garbage'), undefined);
  });

  it('counts zombies of the given parent only, ignoring vanished entries', async () => {
    const fs = fakeProc({
      '1': '1 (node) S 0 1 1 0',
      '10': '10 (sleep) Z 1 10 10 0',
      '11': '11 (sh) Z 1 11 11 0',
      '12': '12 (sleep) Z 7 12 12 0',
      '13': '13 (sleep) S 1 13 13 0',
    });
    const found = await findZombies('/proc', 1, {
      ...fs,
      readdir: async () => ['1', '10', '11', '12', '13', '99', 'self'],
    });
    assert.deepEqual(
      found.map((z) => z.pid),
      [10, 11],
    );
  });

  it('exposes the count as npd_zombie_processes and warns once when running as PID 1', async () => {
    const { logger, lines } = recordingLogger();
    const registry = createRegistry();
    const fs = fakeProc({ '20': '20 (sleep) Z 1 20 20 0' });
    watchZombies({ registry, logger, pid: 1, fs, procPath: '/proc' });
    watchZombies({ registry, logger, pid: 1, fs, procPath: '/proc' });
    assert.equal(await metric(registry, 'npd_zombie_processes'), 1);
    assert.equal(await metric(registry, 'npd_zombie_processes'), 1);
    assert.equal(lines.filter((l) => /running as PID 1/.test(l)).length, 1);
    assert.equal(lines.filter((l) => /zombie processes are waiting/.test(l)).length, 1);
  });

  it('counts a failed scan instead of failing the scrape', async () => {
    const registry = createRegistry();
    const fs: ProcFs = {
      readdir: async () => {
        throw new Error('EACCES');
      },
      readFile: async () => '',
    };
    watchZombies({ registry, logger: recordingLogger().logger, pid: 1, fs });
    assert.equal(await metric(registry, 'npd_zombie_processes'), 0);
    assert.equal(await metric(registry, 'npd_zombie_scan_errors_total'), 1);
  });

  it('finds a real zombie in the real /proc', { timeout: 10_000 }, async (t) => {
    // sh forks a short sleep, then execs a long one that never waits: the short one stays a zombie.
    const parent = spawn('/bin/sh', ['-c', 'sleep 0.05 & exec sleep 5'], { stdio: 'ignore' });
    t.after(() => parent.kill('SIGKILL'));
    const realFs: ProcFs = { readdir: (p) => readdir(p), readFile: (p, e) => readFile(p, e) };
    const pid = parent.pid;
    assert.ok(pid);
    let zombies: number[] = [];
    const deadline = Date.now() + 3000;
    while (zombies.length === 0 && Date.now() < deadline) {
      await sleep(50);
      zombies = (await findZombies('/proc', pid, realFs)).map((z) => z.pid);
    }
    assert.equal(zombies.length, 1);
  });
});
