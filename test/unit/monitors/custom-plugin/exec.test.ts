import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, it } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import { START_FAILURE_MESSAGE } from '../../../../src/monitors/custom-plugin/exec.ts';
import { command, fixture, isDead, killQuietly, readPid, realExecutor } from './helpers.ts';

const TEST_TIMEOUT = { timeout: 15_000 };
const tmp = mkdtempSync(join(tmpdir(), 'npd-plugin-exec-'));
after(() => rmSync(tmp, { recursive: true, force: true }));

/** Polls until the process is dead, for at most `ms`; SIGKILL delivery is not instantaneous. */
async function waitDead(pid: number, ms = 2000): Promise<boolean> {
  const deadline = Date.now() + ms;
  while (!isDead(pid) && Date.now() < deadline) await sleep(20);
  return isDead(pid);
}

describe('plugin execution with real processes', () => {
  const run = realExecutor();

  it(
    'maps exit codes 0, 1, 2 and 3 to OK, NonOK, Unknown and Unknown with stdout as the message',
    TEST_TIMEOUT,
    async () => {
      const results = [];
      for (const code of ['0', '1', '2', '3']) {
        const o = await run(command(fixture('exit.sh'), [code, `said ${code}`]));
        results.push([o.status, o.message, o.state, o.failure]);
      }
      assert.deepEqual(results, [
        ['OK', 'said 0', 'exit status 0', undefined],
        ['NonOK', 'said 1', 'exit status 1', undefined],
        ['Unknown', 'said 2', 'exit status 2', undefined],
        ['Unknown', 'said 3', 'exit status 3', undefined],
      ]);
    },
  );

  it('passes argv without a shell and inherits the environment', TEST_TIMEOUT, async () => {
    process.env.NPD_PLUGIN_TEST = 'inherited';
    try {
      const o = await run(command(fixture('print-env.sh'), ['a b; echo $HOME'], { maxOutputLength: 200 }));
      assert.equal(o.message, 'inherited|a b; echo $HOME|1');
    } finally {
      delete process.env.NPD_PLUGIN_TEST;
    }
  });

  it(
    'kills the whole process group on timeout, grandchild included, with NPD message',
    TEST_TIMEOUT,
    async () => {
      const pidFile = join(tmp, 'hang.pid');
      const path = fixture('hang-with-child.sh');
      const started = Date.now();
      const o = await run(command(path, [pidFile], { timeoutMs: 300, maxOutputLength: 1000 }));
      assert.ok(Date.now() - started < 3000, 'ends soon after the timeout');
      const grandchild = readPid(pidFile);
      try {
        assert.equal(o.status, 'Unknown');
        assert.equal(o.failure, 'timeout');
        assert.equal(
          o.message,
          `Timeout when running plugin "${path}": state - signal: killed. output - "working"`,
        );
        assert.equal(o.abandoned, false);
        assert.equal(await waitDead(grandchild), true, 'the grandchild died with its process group');
      } finally {
        killQuietly(grandchild);
      }
    },
  );

  it('cuts the timeout message to max_output_length, as NPD does', TEST_TIMEOUT, async () => {
    const pidFile = join(tmp, 'hang80.pid');
    const path = fixture('hang-with-child.sh');
    const o = await run(command(path, [pidFile], { timeoutMs: 200 }));
    killQuietly(readPid(pidFile));
    assert.equal(o.message, `Timeout when running plugin "${path}": state - signal: killed.`.slice(0, 80));
    assert.equal(Buffer.byteLength(o.message), 80);
  });

  it('treats a background child holding stdout as still running, then kills it', TEST_TIMEOUT, async () => {
    const pidFile = join(tmp, 'leave.pid');
    const o = await run(
      command(fixture('exit-leaving-child.sh'), [pidFile], { timeoutMs: 300, maxOutputLength: 1000 }),
    );
    const child = readPid(pidFile);
    try {
      assert.equal(o.failure, 'timeout');
      assert.equal(o.status, 'Unknown');
      assert.match(o.message, /: state - exit status 0\. output - "done"$/);
      assert.equal(await waitDead(child), true);
    } finally {
      killQuietly(child);
    }
  });

  it('stops waiting for a process that escaped the group and holds the pipe', TEST_TIMEOUT, async () => {
    const pidFile = join(tmp, 'escape.pid');
    const started = Date.now();
    const o = await realExecutor(300)(command(fixture('escape-group.sh'), [pidFile], { timeoutMs: 200 }));
    const elapsed = Date.now() - started;
    const escaped = readPid(pidFile);
    try {
      assert.equal(o.failure, 'timeout');
      assert.equal(o.abandoned, true);
      assert.ok(elapsed >= 450, `gave up only after timeout + grace, took ${elapsed} ms`);
      assert.equal(isDead(escaped), false, 'the escaped process is out of reach of the group kill');
    } finally {
      killQuietly(escaped);
    }
  });

  it(
    'reads 1 MiB of stdout and stderr without blocking and keeps bounded prefixes',
    TEST_TIMEOUT,
    async () => {
      const o = await run(command(fixture('big-output.sh'), [], { timeoutMs: 10_000 }));
      assert.equal(o.status, 'NonOK');
      assert.equal(o.failure, undefined);
      assert.equal(o.message, 'x'.repeat(80));
      assert.equal(o.stdoutTruncated, true);
      assert.equal(o.stderrTruncated, true);
      assert.equal(o.stderr, 'y'.repeat(4096));
    },
  );

  it(
    'trims stdout and truncates it to max_output_length bytes between characters',
    TEST_TIMEOUT,
    async () => {
      const at = async (max: number) => {
        const o = await run(command(fixture('utf8.sh'), [], { maxOutputLength: max }));
        return [o.message, o.stdoutTruncated];
      };
      assert.deepEqual(await at(5), ['aé', true]);
      assert.deepEqual(await at(9), ['aé€', true]);
      assert.deepEqual(await at(10), ['aé€😀', true]);
      assert.deepEqual(await at(11), ['aé€😀z', false]);
    },
  );

  it('reports a file without the execute bit as a start failure (EACCES)', TEST_TIMEOUT, async () => {
    const o = await run(command(fixture('not-executable.sh')));
    assert.equal(o.status, 'Unknown');
    assert.equal(o.failure, 'start');
    assert.equal(o.message, START_FAILURE_MESSAGE);
    assert.match(o.error ?? '', /^EACCES/);
  });

  it('reports a missing file as a start failure (ENOENT)', TEST_TIMEOUT, async () => {
    const o = await run(command(fixture('does-not-exist.sh')));
    assert.equal(o.status, 'Unknown');
    assert.equal(o.failure, 'start');
    assert.equal(o.message, START_FAILURE_MESSAGE);
    assert.match(o.error ?? '', /^ENOENT/);
  });

  it('kills the process group when aborted', TEST_TIMEOUT, async () => {
    const pidFile = join(tmp, 'abort.pid');
    const controller = new AbortController();
    const pending = run(
      command(fixture('hang-with-child.sh'), [pidFile], { timeoutMs: 10_000 }),
      controller.signal,
    );
    await sleep(200);
    controller.abort();
    const o = await pending;
    const grandchild = readPid(pidFile);
    try {
      assert.equal(o.failure, 'aborted');
      assert.equal(o.status, 'Unknown');
      assert.equal(await waitDead(grandchild), true);
    } finally {
      killQuietly(grandchild);
    }
  });
});
