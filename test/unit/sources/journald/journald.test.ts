import assert from 'node:assert/strict';
import { appendFileSync, existsSync, mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, it, type TestContext } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import { fileURLToPath } from 'node:url';
import { type Clock, FakeClock, systemClock } from '../../../../src/core/clock.ts';
import type { LogLine } from '../../../../src/core/types.ts';
import type { LogMonitorConfig } from '../../../../src/rules/config.ts';
import { MAX_MESSAGE_BYTES } from '../../../../src/sources/journald/entry.ts';
import { createJournaldSource, type JournaldSourceOptions } from '../../../../src/sources/journald/source.ts';
import { isAlive, logConfig, MINUTE, makeDeps, metric, SECOND, tempDir, waitFor } from '../harness.ts';

const FAKE = fileURLToPath(new URL('../../../fixtures/journal/fake-journalctl.mjs', import.meta.url));
/** Not a round second, so --since (whole seconds) and the exact start time differ. */
const T0 = Date.UTC(2026, 0, 1) + 250;

type Fields = Record<string, unknown>;

function entry(n: number, atMs: number, message: unknown, fields: Fields = {}): string {
  const e = { __CURSOR: `c${n}`, __REALTIME_TIMESTAMP: String(atMs * 1000), MESSAGE: message, ...fields };
  return JSON.stringify({ SYSLOG_IDENTIFIER: 'kubelet', _SYSTEMD_UNIT: 'kubelet.service', ...e });
}

interface Setup {
  readonly config?: Partial<LogMonitorConfig>;
  readonly entries?: readonly string[];
  readonly script?: readonly Fields[];
  readonly clock?: Clock;
  readonly opts?: JournaldSourceOptions;
  /** Journal directory below the temp root; default var/log/journal. */
  readonly dir?: string;
}

function setup(t: TestContext, s: Setup = {}) {
  const root = tempDir(t);
  const dir = join(root, s.dir ?? 'var/log/journal');
  mkdirSync(dir, { recursive: true });
  writeFileSync(join(dir, 'entries.jsonl'), (s.entries ?? []).map((e) => `${e}\n`).join(''));
  writeFileSync(join(dir, 'script.json'), JSON.stringify(s.script ?? []));
  // What journald leaves in the folder; the fake journalctl reads entries.jsonl instead.
  writeFileSync(join(dir, 'system.journal'), '');
  const clock = s.clock ?? new FakeClock(T0);
  const deps = makeDeps(clock, root);
  const config = logConfig({ pluginConfig: { source: 'kubelet' }, lookbackMs: MINUTE, ...s.config });
  const source = createJournaldSource(config, deps, {
    command: FAKE,
    // Up 1000 s: boot lies before any lookback used here.
    fs: { readFileSync: () => '1000.00 1.00\n' },
    killTimeoutMs: 2000,
    ...s.opts,
  });
  const lines: LogLine[] = [];
  t.after(() => source.stop());
  const read = (name: string) => (existsSync(join(dir, name)) ? readFileSync(join(dir, name), 'utf8') : '');
  return {
    root,
    dir,
    clock,
    deps,
    source,
    lines,
    start: () => source.start((batch) => lines.push(...batch)),
    messages: () => lines.map((l) => l.message),
    argv: (): string[][] =>
      read('argv.log')
        .trim()
        .split('\n')
        .filter(Boolean)
        .map((l) => JSON.parse(l)),
    pids: (): number[] => read('pids.log').trim().split('\n').filter(Boolean).map(Number),
    metric: (name: string, labels?: Record<string, string>) => metric(deps.registry, name, labels),
  };
}

const dropped = (reason: string) => ({ source: 'test-monitor', reason });

async function exitedRuns(h: ReturnType<typeof setup>, n: number): Promise<void> {
  await waitFor(async () => (await h.metric('npd_journal_restarts_total')) === n, 5000, `${n} restarts`);
}

describe('journald source with a fake journalctl', () => {
  it('starts at the lookback with the configured matches and drops the sub-second remainder', async (t) => {
    const h = setup(t, {
      config: { pluginConfig: { source: 'kubelet', unit: 'kubelet.service' } },
      entries: [
        entry(1, T0 - 2 * MINUTE, 'long before the lookback'),
        entry(2, T0 - MINUTE - 100, 'in the --since second but before the start time'),
        entry(3, T0 - 30 * SECOND, 'other identifier', { SYSLOG_IDENTIFIER: 'dockerd' }),
        entry(4, T0 - 20 * SECOND, 'other unit', { _SYSTEMD_UNIT: 'docker.service' }),
        entry(5, T0 - 10 * SECOND, 'wanted'),
      ],
    });
    h.start();
    await waitFor(() => h.lines.length === 1, 5000, 'the wanted entry');
    const [args] = h.argv();
    assert.ok(args);
    assert.ok(args.includes(`--since=@${(T0 - 250 - MINUTE) / 1000}`), args.join(' '));
    for (const a of [
      '--follow',
      '--output=json',
      '--all',
      `--directory=${h.dir}`,
      'SYSLOG_IDENTIFIER=kubelet',
    ]) {
      assert.ok(args.includes(a), `${a} in ${args.join(' ')}`);
    }
    assert.ok(args.includes('_SYSTEMD_UNIT=kubelet.service'));
    assert.deepEqual(h.lines, [{ timestamp: T0 - 10 * SECOND, message: 'wanted' }]);
    assert.equal(await h.metric('npd_log_lines_dropped_total', dropped('before_start')), 1);
    assert.equal(await h.metric('npd_log_lines_read_total'), 2);
    assert.deepEqual(h.source.health(), { up: true, healthy: true });
  });

  it('restarts an exited journalctl after 1 s and resumes after the last cursor, losing nothing', async (t) => {
    const entries = [1, 2, 3, 4, 5].map((n) => entry(n, T0 - 50 * SECOND + n, `m${n}`));
    const h = setup(t, { entries, script: [{ print: 3, partial: true, exit: 1 }, { follow: true }] });
    h.start();
    await exitedRuns(h, 1);
    assert.deepEqual(h.messages(), ['m1', 'm2', 'm3'], 'the half-written fourth entry is not delivered');
    const health = h.source.health();
    assert.equal(health.healthy, false);
    assert.match(health.detail ?? '', /exited with 1: fake-journalctl: exiting with 1/);
    (h.clock as FakeClock).advance(999);
    await sleep(100);
    assert.equal(h.argv().length, 1, 'no restart before the 1 s backoff');
    (h.clock as FakeClock).advance(1);
    await waitFor(() => h.lines.length === 5, 5000, 'the entries after the cursor');
    const second = h.argv()[1] ?? [];
    assert.ok(second.includes('--after-cursor=c3'), second.join(' '));
    assert.ok(!second.some((a) => a.startsWith('--since')));
    appendFileSync(join(h.dir, 'entries.jsonl'), `${entry(6, T0, 'm6')}\n`);
    await waitFor(() => h.lines.length === 6, 5000, 'the live entry');
    assert.deepEqual(h.messages(), ['m1', 'm2', 'm3', 'm4', 'm5', 'm6']);
    assert.equal(await h.metric('npd_journal_restarts_total'), 1);
  });

  it('backs off 1 s, 2 s, 4 s between failing runs', async (t) => {
    const h = setup(t, { script: [{ exit: 1 }, { exit: 1 }, { exit: 1 }, { follow: true }] });
    const clock = h.clock as FakeClock;
    h.start();
    for (const [run, delay] of [
      [1, 1000],
      [2, 2000],
      [3, 4000],
    ] as const) {
      await exitedRuns(h, run);
      clock.advance(delay - 1);
      await sleep(50);
      assert.equal(h.argv().length, run, `run ${run + 1} waits the full ${delay} ms`);
      clock.advance(1);
      await waitFor(() => h.argv().length === run + 1, 5000, `run ${run + 1}`);
    }
    await waitFor(() => h.source.health().healthy, 5000, 'a healthy fourth run');
  });

  it('reports a missing journal directory as unhealthy, rechecks, and starts once it appears', async (t) => {
    const h = setup(t, { config: { logPath: '/srv/journal' }, entries: [entry(1, T0 - 1000, 'hello')] });
    h.start();
    const health = h.source.health();
    assert.deepEqual(health, {
      up: true,
      healthy: false,
      waiting: true,
      detail: `journal directory ${join(h.root, 'srv/journal')} does not exist`,
    });
    assert.equal(await h.metric('npd_journal_restarts_total'), 1);
    (h.clock as FakeClock).advance(1000);
    assert.equal(await h.metric('npd_journal_restarts_total'), 2);
    const moved = join(h.root, 'srv/journal');
    mkdirSync(moved, { recursive: true });
    writeFileSync(join(moved, 'entries.jsonl'), `${entry(1, T0 - 1000, 'hello')}\n`);
    writeFileSync(join(moved, 'system.journal'), '');
    (h.clock as FakeClock).advance(2000);
    await waitFor(() => h.lines.length === 1, 5000, 'the entry from the new directory');
    assert.deepEqual(h.source.health(), { up: true, healthy: true });
  });

  it('waits, unhealthy but not failing, while the folder holds no journal files; reads once they appear', async (t) => {
    const h = setup(t, { entries: [entry(1, T0 - 1000, 'hello')], opts: { command: FAKE, recheckMs: 5000 } });
    rmSync(join(h.dir, 'system.journal'));
    h.start();
    assert.deepEqual(h.source.health(), {
      up: true,
      healthy: false,
      waiting: true,
      detail: `no journal files in ${h.dir}: systemd-journald is not running or writes elsewhere`,
    });
    // journald writes below a machine-id folder; journalctl -D reads that level too.
    mkdirSync(join(h.dir, '0123456789abcdef0123456789abcdef'));
    writeFileSync(join(h.dir, '0123456789abcdef0123456789abcdef', 'system.journal'), '');
    (h.clock as FakeClock).advance(5000);
    await waitFor(() => h.lines.length === 1, 5000, 'the entry');
    assert.deepEqual(h.source.health(), { up: true, healthy: true });
  });

  it('restarts journalctl on the new directory when the journal moves from /run to /var', async (t) => {
    const first = [entry(1, T0 - 1000, 'one')];
    const h = setup(t, { dir: 'run/log/journal', entries: first, opts: { command: FAKE, recheckMs: 5000 } });
    const clock = h.clock as FakeClock;
    h.start();
    await waitFor(() => h.lines.length === 1, 5000, 'the first entry');
    const persistent = join(h.root, 'var/log/journal');
    mkdirSync(persistent, { recursive: true });
    writeFileSync(join(persistent, 'entries.jsonl'), `${first[0]}\n${entry(2, T0 - 500, 'two')}\n`);
    clock.advance(5000);
    await waitFor(
      () => {
        clock.advance(0);
        return h.lines.length === 2;
      },
      5000,
      'the entry after the cursor in /var',
    );
    const args = JSON.parse(readFileSync(join(persistent, 'argv.log'), 'utf8').trim()) as string[];
    assert.ok(
      args.includes(`--directory=${persistent}`) && args.includes('--after-cursor=c1'),
      args.join(' '),
    );
    assert.deepEqual(h.messages(), ['one', 'two']);
  });

  it('counts malformed, oversized, empty and truncated records', async (t) => {
    const huge = entry(4, T0 - 400, 'x'.repeat(1024 * 1024 + 10));
    const h = setup(t, {
      entries: [
        'not json at all',
        entry(2, T0 - 600, '   '),
        entry(3, T0 - 500, `${'y'.repeat(MAX_MESSAGE_BYTES)}tail`),
        huge,
        entry(5, T0 - 300, 'after'),
      ],
    });
    h.start();
    await waitFor(() => h.lines.length === 2, 5000, 'the good entries');
    assert.equal(h.lines[0]?.message, 'y'.repeat(MAX_MESSAGE_BYTES));
    assert.equal(h.lines[1]?.message, 'after');
    assert.equal(await h.metric('npd_log_lines_malformed_total'), 1);
    assert.equal(await h.metric('npd_log_lines_dropped_total', dropped('empty')), 1);
    assert.equal(await h.metric('npd_log_lines_dropped_total', dropped('oversized')), 1);
    assert.equal(await h.metric('npd_log_lines_truncated_total'), 1);
    assert.equal(await h.metric('npd_log_lines_read_total'), 5);
  });

  it('survives a consumer that throws', async (t) => {
    const h = setup(t, { entries: [entry(1, T0 - 100, 'boom'), entry(2, T0 - 50, 'fine')] });
    let calls = 0;
    h.source.start(() => {
      calls++;
      throw new Error('consumer bug');
    });
    await waitFor(
      async () => (await h.metric('npd_log_lines_dropped_total', dropped('callback_error'))) === 2,
    );
    assert.ok(calls >= 1);
    assert.deepEqual(h.source.health(), { up: true, healthy: true });
  });

  it('stops with SIGTERM and leaves no process behind', async (t) => {
    const h = setup(t, { clock: systemClock, entries: [entry(1, Date.now(), 'x')] });
    h.start();
    await waitFor(() => h.lines.length === 1 && h.source.health().healthy, 5000, 'a running child');
    const [pid] = h.pids();
    assert.ok(pid !== undefined && isAlive(pid));
    await h.source.stop();
    assert.equal(isAlive(pid), false, 'journalctl is gone (and reaped)');
    assert.deepEqual(h.source.health(), { up: false, healthy: false, detail: 'not started' });
  });

  it('escalates to SIGKILL when journalctl ignores SIGTERM', async (t) => {
    const h = setup(t, {
      clock: systemClock,
      script: [{ follow: true, ignoreTerm: true }],
      opts: { command: FAKE, fs: { readFileSync: () => '1000.00 1.00\n' }, killTimeoutMs: 300 },
    });
    h.start();
    await waitFor(() => h.source.health().healthy && h.pids().length === 1, 5000, 'a running child');
    await sleep(100); // let the child install its SIGTERM handler
    const [pid] = h.pids();
    const began = Date.now();
    await h.source.stop();
    assert.ok(Date.now() - began >= 290, 'waited for SIGTERM first');
    assert.equal(isAlive(pid as number), false);
  });

  it('degrades when journalctl cannot be run at all', async (t) => {
    const h = setup(t, { opts: { command: join('/nonexistent', 'journalctl') } });
    h.start();
    await waitFor(async () => (await h.metric('npd_journal_restarts_total')) === 1, 5000, 'a counted retry');
    const health = h.source.health();
    assert.equal(health.up, true);
    assert.equal(health.healthy, false);
    assert.match(health.detail ?? '', /spawn failed|ENOENT/);
  });
});
