/**
 * The previous boot's crash from the persistent journal: fake `journalctl -o json` output below a
 * fake host root for each outcome, and the pstore duplicate rule. journal-report-real.test.ts reads
 * a real journald's journal of several boots with the real journalctl.
 */
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { after, describe, it } from 'node:test';
import { CRASH_SOURCE } from '../../../../src/agent/crash-report.ts';
import { createRegistry } from '../../../../src/core/metrics.ts';
import { EventDispatcher } from '../../../../src/events/dispatcher.ts';
import { SAME_CRASH_MS } from '../../../../src/monitors/crash/journal-report.ts';
import {
  BENIGN,
  BOOT,
  host,
  kernel,
  none,
  noSkips,
  PREV_UUID,
  removeRoots,
  run,
  skippedOnly,
  T,
} from './journal-harness.ts';

after(removeRoots);

describe("previous boot crash report from the journal's kernel lines", () => {
  it('reports a panic after an oops as a panic, at the panic line, with both boot IDs', async () => {
    const root = await host();
    const stdout = [
      kernel(1, T, BENIGN[0] as string),
      kernel(2, T + 1000, 'BUG: kernel NULL pointer dereference, address: 0000000000000010', 1),
      kernel(3, T + 1100, 'Oops: 0000 [#1] PREEMPT SMP NOPTI', 4),
      kernel(4, T + 1500, 'Kernel panic - not syncing: Fatal exception', 0),
      kernel(5, T + 1600, 'Kernel Offset: disabled', 0),
    ].join('\n');
    const r = await run(root, { stdout: `${stdout}\n` });
    assert.deepEqual(r.argv, [
      [
        'journalctl',
        '--dmesg',
        `--boot=${BOOT.replaceAll('-', '')}-1`,
        '--lines=200',
        '--output=json',
        '--output-fields=MESSAGE',
        '--all',
        '--no-pager',
        '--quiet',
        `--directory=${join(root, 'var', 'log', 'journal')}`,
      ],
    ]);
    assert.equal(r.statuses.length, 1);
    assert.equal(r.statuses[0]?.source, CRASH_SOURCE);
    assert.deepEqual(r.statuses[0]?.conditions, []);
    assert.equal(r.events.length, 1);
    const e = r.events[0];
    assert.equal(e?.reason, 'PreviousBootPanic');
    assert.equal(e?.severity, 'warn');
    assert.equal(e?.timestamp, T + 1500, "the deciding line's journal time");
    assert.equal(
      e?.message,
      `previous boot ${PREV_UUID}: Kernel panic - not syncing: Fatal exception (kernel log in the journal, ` +
        `logged ${new Date(T + 1500).toISOString()}, last kernel line ${new Date(T + 1600).toISOString()}; ` +
        `reported at boot ${BOOT})`,
    );
    assert.deepEqual(r.journal, { ...none, panic: 1 });
    assert.deepEqual(r.pstore, none);
    assert.deepEqual(r.skipped, noSkips, 'every series at 0, none counted');
  });

  it('names a hard lockup that panicked after its watchdog line, and an oops without a panic as an oops', async () => {
    const lockup = await run(await host(), {
      stdout: [
        kernel(1, T, BENIGN[1] as string),
        kernel(2, T + 2000, 'NMI watchdog: Watchdog detected hard LOCKUP on cpu 3', 0),
        kernel(3, T + 2001, 'Kernel panic - not syncing: Hard LOCKUP', 0),
      ].join('\n'),
    });
    assert.deepEqual(
      lockup.events.map((e) => [e.reason, e.timestamp]),
      [['PreviousBootHardLockup', T + 2000]],
    );
    assert.match(
      lockup.events[0]?.message ?? '',
      /: NMI watchdog: Watchdog detected hard LOCKUP on cpu 3 \(/,
    );
    assert.deepEqual(lockup.journal, { ...none, hard_lockup: 1 });
    const oops = await run(await host(), {
      stdout: [
        kernel(
          1,
          T,
          'general protection fault, probably for non-canonical address 0xdead000000000100: 0000 [#1] SMP NOPTI',
          4,
        ),
        kernel(2, T + 10, 'RIP: 0010:__list_del_entry_valid+0x2c/0x80', 4),
        kernel(3, T + 60_000, 'EXT4-fs (nvme0n1p1): mounted filesystem with ordered data mode', 6),
      ].join('\n'),
    });
    assert.deepEqual(
      oops.events.map((e) => [e.reason, e.timestamp]),
      [['PreviousBootOops', T]],
    );
    assert.deepEqual(oops.journal, { ...none, oops: 1 });
  });

  it('reports nothing for an orderly boot whose lines only look like a crash', async () => {
    const stdout = [
      ...BENIGN.map((m, i) => kernel(i + 1, T + i, m)),
      // kernel/reboot.c: "reboot: Restarting system", as in test/fixtures/pstore/shutdown.
      kernel(9, T + 9000, 'reboot: Restarting system', 0),
    ].join('\n');
    const r = await run(await host(), { stdout });
    assert.deepEqual(r.statuses, []);
    assert.deepEqual(r.journal, none);
    assert.deepEqual(r.skipped, skippedOnly('no_crash'));
  });

  it('counts no previous boot: journalctl has none, or no kernel line of it', async () => {
    const stderr =
      'Data from the specified boot (0a9b8c7d6e5f4a3b8c1d0e9f8a7b6c5d-1) is not available: No such boot ID in journal\n';
    const missing = await run(await host(), { code: 1, stderr });
    assert.deepEqual(missing.statuses, []);
    assert.deepEqual(missing.skipped, skippedOnly('no_previous_boot'));
    const newer = await run(
      await host(),
      { code: 1, stderr: 'No journal boot entry found from the specified boot offset (-1).\n' },
      null,
    );
    assert.deepEqual(newer.skipped, skippedOnly('no_previous_boot'));
    assert.equal(
      newer.argv[0]?.[2],
      '--boot=-1',
      "this boot's ID unknown: counted back from the newest boot",
    );
    const empty = await run(await host(), { stdout: '' });
    assert.deepEqual(empty.skipped, skippedOnly('no_previous_boot'));
  });

  it('counts a host without a persistent journal and never runs journalctl there', async () => {
    const r = await run(await host({ journal: false }), {
      stdout: kernel(1, T, 'Kernel panic - not syncing: x'),
    });
    assert.deepEqual(r.argv, []);
    assert.deepEqual(r.statuses, []);
    assert.deepEqual(r.skipped, skippedOnly('no_journal'));
  });

  it('counts journalctl failing (missing binary, an error exit) and garbage, and goes on', async () => {
    const missing = await run(await host(), { missing: true });
    assert.deepEqual(missing.skipped, skippedOnly('journalctl_failed'));
    const failed = await run(await host(), {
      code: 1,
      stderr: 'Failed to open /host/var/log/journal: Permission denied\n',
    });
    assert.deepEqual(failed.skipped, skippedOnly('journalctl_failed'));
    const garbage = await run(await host(), { stdout: 'not json\n{"MESSAGE":"no cursor"}\n[1,2]\n' });
    assert.deepEqual(garbage.statuses, []);
    assert.deepEqual(garbage.skipped, skippedOnly('malformed'), 'one read, counted once');
    // Garbage beside good lines: the good ones are still read.
    const mixed = await run(await host(), {
      stdout: `{"broken\n${kernel(2, T, 'Kernel panic - not syncing: Fatal exception', 0)}\n`,
    });
    assert.deepEqual(
      mixed.events.map((e) => e.reason),
      ['PreviousBootPanic'],
    );
    assert.deepEqual(mixed.skipped, skippedOnly('malformed'));
  });

  it('reports a crash in both pstore and the journal once, from pstore', async () => {
    // test/fixtures/pstore/panic: the dump's time (its mtime) is when the backend wrote it.
    const panic = [
      kernel(
        1,
        T,
        'general protection fault, probably for non-canonical address 0xdead000000000100: 0000 [#1] SMP NOPTI',
        4,
      ),
      kernel(2, T + 200, 'Kernel panic - not syncing: Fatal exception', 0),
    ].join('\n');
    const same = await run(await host({ pstore: ['panic'], written: T + 200 + SAME_CRASH_MS }), {
      stdout: panic,
    });
    assert.deepEqual(
      same.events.map((e) => e.reason),
      ['PreviousBootPanic'],
    );
    assert.match(same.events[0]?.message ?? '', /in pstore/);
    assert.deepEqual(same.pstore, { ...none, panic: 1 });
    assert.deepEqual(same.journal, none);
    assert.deepEqual(same.skipped, skippedOnly('duplicate'));
    // A dump from an older boot, hours before the journal's crash: two crashes, two events.
    const older = await run(await host({ pstore: ['panic'], written: T - 3 * 3_600_000 }), { stdout: panic });
    assert.deepEqual(
      older.events.map((e) => [e.reason, /in pstore/.test(e.message) ? 'pstore' : 'journal']),
      [
        ['PreviousBootPanic', 'pstore'],
        ['PreviousBootPanic', 'journal'],
      ],
    );
    assert.deepEqual(older.journal, { ...none, panic: 1 });
    assert.deepEqual(older.skipped, noSkips);
  });

  it("a restarted agent posts nothing again: the events' times are at or below the watermark", async () => {
    const r = await run(await host({ pstore: ['oops'], written: T - 3_600_000 }), {
      stdout: kernel(1, T, 'Kernel panic - not syncing: Fatal exception', 0),
    });
    assert.equal(r.events.length, 2);
    const dispatcher = new EventDispatcher(createRegistry());
    const posted: string[] = [];
    dispatcher.attach(
      { recorderFor: () => ({ event: (_type, reason) => posted.push(reason) }) },
      // The previous run's newest event of this source, and this run's start (after the crash).
      {
        watermarks: { [CRASH_SOURCE]: Math.max(...r.events.map((e) => e.timestamp)) },
        startedAt: T + 3_600_000,
      },
    );
    dispatcher.dispatch(CRASH_SOURCE, r.events);
    assert.deepEqual(posted, []);
    // Control: the same events without the previous run's watermark are posted.
    const fresh = new EventDispatcher(createRegistry());
    const first: string[] = [];
    fresh.attach(
      { recorderFor: () => ({ event: (_type, reason) => first.push(reason) }) },
      { startedAt: T + 3_600_000 },
    );
    fresh.dispatch(CRASH_SOURCE, r.events);
    assert.deepEqual(first.sort(), ['PreviousBootOops', 'PreviousBootPanic']);
  });
});
