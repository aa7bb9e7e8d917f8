/**
 * Issue 38 build item 3 for the previous boot's crash report: its PreviousBoot* events say what raised
 * them (core/evidence.ts), the kernel's text in pstore's dump or in the journal's kernel entries.
 */
import assert from 'node:assert/strict';
import { after, describe, it } from 'node:test';
import { CRASH_SOURCE, reportPreviousCrash } from '../../../../src/agent/crash-report.ts';
import { FakeClock } from '../../../../src/core/clock.ts';
import { silentLogger } from '../../../../src/core/logger.ts';
import { createRegistry } from '../../../../src/core/metrics.ts';
import type { Status } from '../../../../src/core/types.ts';
import { BOOT, fakeJournalctl, host, kernel, removeRoots, T } from './journal-harness.ts';

after(removeRoots);

const HOUR = 3_600_000;
const PANIC = 'Kernel panic - not syncing: Fatal exception';

async function report(root: string, journal: string) {
  const statuses: Status[] = [];
  const deps = {
    hostRoot: root,
    bootId: BOOT,
    clock: new FakeClock(T + HOUR),
    registry: createRegistry(),
    logger: silentLogger(),
    journal: { spawn: fakeJournalctl({ stdout: journal }, []) },
  };
  await reportPreviousCrash(deps, (s) => statuses.push(s));
  return statuses.flatMap((s) => s.events);
}

describe('previous-boot crash evidence', () => {
  it("pstore's dump: pstore/kernel", async () => {
    const events = await report(await host({ pstore: ['panic'], written: T - HOUR }), '');
    assert.deepEqual(
      events.map((e) => [e.reason, e.evidence]),
      [['PreviousBootPanic', { source: CRASH_SOURCE, plugin: 'pstore', trust: 'kernel' }]],
    );
  });

  it("the journal's kernel entries (--dmesg): journald/kernel, the kernel transport as writer", async () => {
    const events = await report(await host(), kernel(1, T - HOUR, PANIC, 0));
    assert.deepEqual(
      events.map((e) => [e.reason, e.evidence]),
      [
        [
          'PreviousBootPanic',
          { source: CRASH_SOURCE, plugin: 'journald', trust: 'kernel', writer: { transport: 'kernel' } },
        ],
      ],
    );
  });
});
