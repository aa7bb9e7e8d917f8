import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { FakeClock, systemClock } from '../../../src/core/clock.ts';
import { runBounded } from '../../../src/host/process/bounded-command.ts';

const sh = (script: string, maxBytes: number, keep?: 'head' | 'tail') => ({
  command: '/bin/sh',
  args: ['-c', script],
  maxBytes,
  timeoutMs: 30_000,
  ...(keep ? { keep } : {}),
});

describe('runBounded', () => {
  it('returns the output and exit code, with an empty environment', async () => {
    process.env.NPD_UNIT_PLANTED = 'planted-value';
    const out = await runBounded(sh('echo hi; env; exit 3', 10_000), systemClock);
    assert.equal(out.code, 3);
    assert.match(out.stdout, /^hi\n/);
    assert.equal(out.stdout.includes('planted-value'), false);
    assert.equal(out.truncated, false);
  });

  it('head: stops the command at maxBytes', async () => {
    const out = await runBounded(sh('yes line', 1000), systemClock);
    assert.equal(out.truncated, true);
    assert.equal(Buffer.byteLength(out.stdout), 1000);
    assert.ok(out.stdout.startsWith('line\n'));
  });

  it('tail: reads to the end and keeps the newest maxBytes', async () => {
    const out = await runBounded(sh('seq 1 20000', 12, 'tail'), systemClock);
    assert.equal(out.truncated, true);
    assert.equal(out.stdout, '19999\n20000\n');
    assert.equal(out.code, 0);
  });

  it('kills the command at the deadline of the injected clock', async () => {
    const clock = new FakeClock();
    const pending = runBounded(
      { command: '/bin/sh', args: ['-c', 'echo started; sleep 5'], maxBytes: 100, timeoutMs: 5_000 },
      clock,
    );
    await new Promise((r) => setTimeout(r, 200));
    clock.advance(5_000);
    const out = await pending;
    assert.equal(out.timedOut, true);
    assert.equal(out.code, null);
  });

  it('a missing command is reported, not thrown', async () => {
    const out = await runBounded(
      { command: '/nonexistent/journalctl', args: [], maxBytes: 10, timeoutMs: 1000 },
      systemClock,
    );
    assert.equal(out.code, undefined);
    assert.match(out.error ?? '', /ENOENT/);
  });
});
