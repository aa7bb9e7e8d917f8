/**
 * The previous boot's crash from pstore: the dmesg records of test/fixtures/pstore (see its README)
 * copied below a fake host root, read at start-up and reported as one Warning event per dump.
 */
import assert from 'node:assert/strict';
import { cp, mkdir, mkdtemp, readdir, rm, utimes } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, it } from 'node:test';
import { CRASH_SOURCE, reportPreviousCrash } from '../../../../src/agent/crash-report.ts';
import { systemClock } from '../../../../src/core/clock.ts';
import { silentLogger } from '../../../../src/core/logger.ts';
import { createRegistry } from '../../../../src/core/metrics.ts';
import type { Status } from '../../../../src/core/types.ts';
import { crashReports } from '../../../../src/monitors/crash/pstore-report.ts';
import { sample } from '../../../support/fake-node.ts';

const FIXTURES = join(import.meta.dirname, '..', '..', '..', 'fixtures', 'pstore');
const BOOT = '0a9b8c7d-6e5f-4a3b-8c1d-0e9f8a7b6c5d';
/** When the fixtures' dumps were "written" (their mtime), as a backend stamps the file. */
const WRITTEN = Date.UTC(2026, 10, 30, 23, 59, 30);
const roots: string[] = [];
after(() => Promise.all(roots.map((r) => rm(r, { recursive: true, force: true }))));

/** A host root whose /sys/fs/pstore holds the named fixture directories' files. */
async function hostWith(...cases: string[]): Promise<string> {
  const root = await mkdtemp(join(tmpdir(), 'npd-pstore-'));
  roots.push(root);
  const dir = join(root, 'sys', 'fs', 'pstore');
  await mkdir(dir, { recursive: true });
  for (const c of cases) await cp(join(FIXTURES, c), dir, { recursive: true });
  for (const name of await readdir(dir)) await utimes(join(dir, name), WRITTEN / 1000, WRITTEN / 1000);
  return root;
}

async function run(root: string) {
  const registry = createRegistry();
  const statuses: Status[] = [];
  // No var/log/journal below the root: only pstore is read.
  const deps = { hostRoot: root, bootId: BOOT, clock: systemClock, registry, logger: silentLogger() };
  await reportPreviousCrash(deps, (s) => statuses.push(s));
  const kinds = ['panic', 'oops', 'hard_lockup'];
  const counts = await Promise.all(
    kinds.map((kind) => sample(registry, 'npd_previous_boot_crashes_total', { kind, origin: 'pstore' })),
  );
  const skipped = await Promise.all(
    ['compressed', 'no_crash'].map((reason) =>
      sample(registry, 'npd_pstore_records_skipped_total', { reason }),
    ),
  );
  return { statuses, counts: Object.fromEntries(kinds.map((k, i) => [k, counts[i]])), skipped };
}

describe('previous boot crash report from pstore', () => {
  it('names a hard lockup that panicked from both parts of one EFI dump, with the boot ID', async () => {
    const { statuses, counts } = await run(await hostWith('hard-lockup'));
    assert.equal(statuses.length, 1);
    assert.equal(statuses[0]?.source, CRASH_SOURCE);
    assert.deepEqual(statuses[0]?.conditions, []);
    const events = statuses[0]?.events ?? [];
    assert.equal(events.length, 1, 'two parts of one dump are one report');
    assert.equal(events[0]?.reason, 'PreviousBootHardLockup');
    assert.equal(events[0]?.severity, 'warn');
    assert.equal(events[0]?.timestamp, WRITTEN);
    assert.match(
      events[0]?.message ?? '',
      /^previous boot: NMI watchdog: Watchdog detected hard LOCKUP on cpu 3 /,
    );
    assert.match(
      events[0]?.message ?? '',
      /Panic#1 in pstore \(dmesg-efi-165467895701001, dmesg-efi-165467895702001\)/,
    );
    assert.match(events[0]?.message ?? '', new RegExp(`reported at boot ${BOOT}`));
    assert.deepEqual(counts, { panic: 0, oops: 0, hard_lockup: 1 });
  });

  it('reports a panic by its panic line, and an oops without a panic as an oops', async () => {
    const { statuses, counts, skipped } = await run(await hostWith('panic', 'oops'));
    const events = statuses.flatMap((s) => s.events);
    assert.deepEqual(
      events.map((e) => [e.reason, e.message.split(' (')[0]]),
      [
        ['PreviousBootPanic', 'previous boot: Kernel panic - not syncing: Fatal exception'],
        [
          'PreviousBootOops',
          'previous boot: BUG: kernel NULL pointer dereference, address: 0000000000000010',
        ],
      ],
    );
    assert.deepEqual(counts, { panic: 1, oops: 1, hard_lockup: 0 });
    assert.deepEqual(
      skipped,
      [1, 0],
      'the undecompressed record is counted; the console record is no dmesg record',
    );
  });

  it('reports nothing for an orderly restart dump, nor without pstore', async () => {
    const shutdown = await run(await hostWith('shutdown'));
    assert.deepEqual(shutdown.statuses, []);
    assert.deepEqual(shutdown.skipped, [0, 1]);
    const none = await run(await hostWith());
    assert.deepEqual(none.statuses, []);
    assert.deepEqual(none.counts, { panic: 0, oops: 0, hard_lockup: 0 });
  });

  it('keeps separate dumps apart and classifies header-less text by its lines', () => {
    const { reports, withoutCrash } = crashReports(
      [
        {
          name: 'dmesg-ramoops-0',
          text: 'Oops#1 Part1\n<4>[ 1.0] kernel BUG at mm/slub.c:4342!\n',
          writtenAt: 1,
        },
        {
          name: 'dmesg-ramoops-1',
          text: 'Oops#2 Part1\n<4>[ 2.0] divide error: 0000 [#2] SMP PTI\n',
          writtenAt: 2,
        },
        {
          name: 'dmesg-erst-7',
          text: '<0>[ 3.0] Kernel panic - not syncing: hung_task: blocked tasks\n',
          writtenAt: 3,
        },
        { name: 'dmesg-erst-8', text: '<6>[ 4.0] EXT4-fs (sda1): mounted filesystem\n', writtenAt: 4 },
      ],
      undefined,
    );
    assert.deepEqual(
      reports.map((r) => [r.kind, r.event.timestamp]),
      [
        ['oops', 1],
        ['oops', 2],
        ['panic', 3],
      ],
    );
    assert.equal(withoutCrash, 1);
    assert.doesNotMatch(reports[0]?.event.message ?? '', /reported at boot/);
  });
});
