/**
 * One real systemd-journald (test/support/journald.ts) writing a journal of several boots with kernel
 * lines below a temporary host root, read back by the real journalctl the way the agent runs it.
 */
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { after, it } from 'node:test';
import { reportPreviousCrash } from '../../../../src/agent/crash-report.ts';
import { systemClock } from '../../../../src/core/clock.ts';
import { silentLogger } from '../../../../src/core/logger.ts';
import { createRegistry } from '../../../../src/core/metrics.ts';
import type { Status } from '../../../../src/core/types.ts';
import { sample } from '../../../support/fake-node.ts';
import { TestJournal, testJournalUnavailable } from '../../../support/journald.ts';
import { BENIGN, removeRoots, tempRoot } from './journal-harness.ts';

after(removeRoots);

const SKIP_REAL =
  testJournalUnavailable() ??
  (spawnSync('journalctl', ['--version'], { stdio: 'ignore' }).status === 0 ? false : 'no journalctl');

it('a real journald with several boots: the real journalctl gives the previous boot, and only it', {
  skip: SKIP_REAL,
  timeout: 120_000,
}, async (t) => {
  const root = await tempRoot('npd-journal-boots-');
  // The files go below root/var/log/journal, never the host's /var/log/journal.
  const journal = new TestJournal(root, { hostRoot: root, kernel: true });
  t.after(async () => {
    await journal.stop();
    journal.cleanup();
  });
  const boots = [1, 2, 3, 4].map((n) => `${n}${n}${n}${n}${n}${n}${n}${n}-0000-4000-8000-00000000000${n}`);
  const started = Date.now();
  await journal.start({ bootId: boots[0] });
  await journal.writeKernel([BENIGN[0] as string]);
  await journal.writeKernel(['BUG: kernel NULL pointer dereference, address: 0000000000000010'], 1);
  await journal.writeKernel(['Kernel panic - not syncing: Fatal exception'], 0);
  await journal.stop();
  await journal.start({ bootId: boots[1] });
  await journal.writeKernel(['EXT4-fs (nvme0n1p1): mounted filesystem with ordered data mode']);
  await journal.stop();
  await journal.start({ bootId: boots[2] });
  await journal.writeKernel([...BENIGN, 'reboot: Restarting system']);
  await journal.stop();

  const read = async (bootId: string | undefined) => {
    const registry = createRegistry();
    const statuses: Status[] = [];
    const deps = { hostRoot: root, bootId, clock: systemClock, registry, logger: silentLogger() };
    await reportPreviousCrash(deps, (s) => statuses.push(s));
    const skipped = async (reason: string) =>
      sample(registry, 'npd_previous_boot_journal_skipped_total', { reason });
    return { events: statuses.flatMap((s) => s.events), skipped };
  };
  // Boot 2 asks: boot 1 panicked.
  const second = await read(boots[1]);
  assert.deepEqual(
    second.events.map((e) => e.reason),
    ['PreviousBootPanic'],
  );
  const message = second.events[0]?.message ?? '';
  assert.match(
    message,
    new RegExp(`^previous boot ${boots[0]}: Kernel panic - not syncing: Fatal exception \\(`),
  );
  assert.match(message, new RegExp(`reported at boot ${boots[1]}\\)$`));
  const at = second.events[0]?.timestamp ?? 0;
  assert.ok(
    at >= started - 1000 && at <= Date.now(),
    `the line's journal time, ${new Date(at).toISOString()}`,
  );
  // Boot 3 asks: boot 2 ended without a crash line.
  const third = await read(boots[2]);
  assert.deepEqual(third.events, []);
  assert.equal(await third.skipped('no_crash'), 1);
  // Boot 4 (journald running and writing it, as on a node) asks: boot 3's look-alikes are no crash,
  // with and without its own ID (-b <id>-1 and -b -1).
  await journal.start({ bootId: boots[3] });
  await journal.writeKernel(['EXT4-fs (nvme0n1p1): mounted filesystem with ordered data mode']);
  for (const id of [boots[3], undefined]) {
    const fourth = await read(id);
    assert.deepEqual(fourth.events, []);
    assert.equal(await fourth.skipped('no_crash'), 1, `asked as ${id ?? 'an unknown boot'}`);
  }
  // Boot 1 asks: there is no boot before it, in journalctl's own words.
  const first = await read(boots[0]);
  assert.deepEqual(first.events, []);
  assert.equal(await first.skipped('no_previous_boot'), 1);
});
