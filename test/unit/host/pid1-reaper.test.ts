import assert from 'node:assert/strict';
import { execFileSync, spawnSync } from 'node:child_process';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { FakeClock } from '../../../src/core/clock.ts';
import { silentLogger } from '../../../src/core/logger.ts';
import { createRegistry } from '../../../src/core/metrics.ts';
import { Pid1Reaper } from '../../../src/host/clib/pid1-reaper.ts';

function fakeProc(zombies: () => number[]) {
  return {
    readdir: async () => zombies().map(String),
    readFile: async (path: string) => `${path.split('/').at(-2)} (sh) Z 1 1 1`,
  };
}

describe('Pid1Reaper', () => {
  it('waits only for zombies seen in two scans in a row, so libuv keeps its own children', async () => {
    let current = [10, 11];
    const waited: number[] = [];
    const reaper = new Pid1Reaper({
      clock: new FakeClock(),
      registry: createRegistry(),
      logger: silentLogger(),
      fs: fakeProc(() => current),
      waitpid: (pid) => {
        waited.push(pid);
        return pid;
      },
    });
    assert.equal(await reaper.sweep(), 0, 'first sight: not yet');
    current = [11, 12];
    assert.equal(await reaper.sweep(), 1);
    assert.deepEqual(waited, [11]);
  });

  function canUnshare(): boolean {
    if (process.getuid?.() !== 0) return false;
    return spawnSync('unshare', ['--pid', '--fork', '--mount-proc', 'true']).status === 0;
  }

  it('as PID 1 of a real PID namespace, reaps an orphan and leaves its own children to libuv', {
    skip: !canUnshare(),
  }, () => {
    const script = join(import.meta.dirname, '..', '..', 'fixtures', 'reaper', 'as-pid1.ts');
    const out = execFileSync(
      'unshare',
      ['--pid', '--fork', '--mount-proc', process.execPath, '--import', 'tsx', script],
      {
        encoding: 'utf8',
        timeout: 30_000,
      },
    );
    const result = JSON.parse(out.trim().split('\n').at(-1) ?? '{}') as Record<string, number>;
    assert.equal(result.pid, 1);
    assert.ok((result.before ?? 0) >= 1, 'the orphan became a zombie under PID 1');
    assert.ok((result.reaped ?? 0) >= 1);
    assert.equal(result.after, 0, 'no zombie left');
    assert.equal(result.ownCode, 0, "the agent's own child still reported its exit");
  });
});
