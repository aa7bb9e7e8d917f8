/**
 * A future crash report silenced crash reports (issue 38 item 4): a pstore dump stamped in the future (a
 * clock that ran ahead) was posted with that time, moved the crash reporter's event watermark past now,
 * the watermark went to the Node and only rises, so at every later start the previous boot's crash
 * looked like a replay and was dropped. A forged watermark annotation did the same. Each test runs agent
 * starts as the exporter wires them: reportPreviousCrash, the EventDispatcher with the Node's
 * watermarks and this start's time, Ownership advancing and writing the annotation back.
 */
import assert from 'node:assert/strict';
import { after, describe, it } from 'node:test';
import { CRASH_SOURCE, reportPreviousCrash } from '../../../../src/agent/crash-report.ts';
import { Ownership, WATERMARK_ANNOTATION } from '../../../../src/conditions/ownership.ts';
import { FakeClock } from '../../../../src/core/clock.ts';
import { silentLogger } from '../../../../src/core/logger.ts';
import { createRegistry } from '../../../../src/core/metrics.ts';
import type { ProblemEvent, Status } from '../../../../src/core/types.ts';
import { EventDispatcher } from '../../../../src/events/dispatcher.ts';
import { seriesValue } from '../../../support/fake-node.ts';
import { BOOT, fakeJournalctl, host, kernel, removeRoots, T } from './journal-harness.ts';

after(removeRoots);

const HOUR = 3_600_000;
/** A pstore dump written while the clock said 2035. */
const FUTURE = Date.UTC(2035, 0, 1);
const PANIC = 'Kernel panic - not syncing: Fatal exception';

interface Start {
  readonly root: string;
  /** The journalctl output of the previous boot's kernel lines. */
  readonly journal: string;
  readonly now: number;
  /** The Node's event-watermarks annotation as the previous start left it. */
  readonly annotation: string | undefined;
}

/** One agent start: the crash report, then its events through the dispatcher and the ownership. */
async function start(s: Start) {
  const registry = createRegistry();
  const statuses: Status[] = [];
  const deps = {
    hostRoot: s.root,
    bootId: BOOT,
    clock: new FakeClock(s.now),
    registry,
    logger: silentLogger(),
    journal: { spawn: fakeJournalctl({ stdout: s.journal }, []) },
  };
  await reportPreviousCrash(deps, (st) => statuses.push(st));
  const found = statuses.flatMap((st) => st.events);
  const ownership = new Ownership([], BOOT);
  const annotations: Record<string, string> =
    s.annotation === undefined ? {} : { [WATERMARK_ANNOTATION]: s.annotation };
  const plan = ownership.plan({ name: 'n1', uid: 'u1', conditions: [], taints: [], annotations });
  const dispatcher = new EventDispatcher(registry);
  const posted: string[] = [];
  dispatcher.attach(
    { recorderFor: () => ({ event: (_type, reason, message) => posted.push(`${reason}: ${message}`) }) },
    {
      watermarks: plan.watermarks,
      startedAt: s.now,
      onRecorded: (source, timestamp) => ownership.advance(source, timestamp, s.now),
    },
  );
  dispatcher.dispatch(CRASH_SOURCE, found);
  const value = async (name: string, labels: Record<string, string>) =>
    (await seriesValue(registry, name, labels)) ?? 0;
  return {
    found,
    posted,
    annotation: ownership.extras().annotations[WATERMARK_ANNOTATION],
    future: { pstore: await value('npd_previous_boot_crashes_future_timestamp_total', { origin: 'pstore' }) },
    ignored: await value('npd_events_watermarks_ignored_total', { source: CRASH_SOURCE }),
  };
}

const marks = (annotation: string | undefined) => JSON.parse(annotation ?? '{}') as Record<string, number>;
const times = (events: readonly ProblemEvent[]) => events.map((e) => e.timestamp);

describe('a crash report stamped in the future', () => {
  it('counts from now, so the next boot still gets its crash report', async () => {
    const root = await host({ pstore: ['panic'], written: FUTURE });
    const first = await start({ root, journal: '', now: T + HOUR, annotation: undefined });
    assert.deepEqual(times(first.found), [T + HOUR], 'the 2035 dump counts from when it was read');
    assert.match(
      first.found[0]?.message ?? '',
      /written 2035-01-01T00:00:00\.000Z/,
      'its own time still shown',
    );
    assert.equal(first.future.pstore, 1);
    assert.equal(first.posted.length, 1);
    assert.deepEqual(marks(first.annotation), { [CRASH_SOURCE]: T + HOUR }, 'the watermark stays at now');
    // The node crashes again two hours later; the next start reads that crash from the journal (the
    // 2035 dump is still in pstore: it counts from now again, and is posted again).
    const crash = T + 3 * HOUR;
    const journal = kernel(1, crash, PANIC, 0);
    const second = await start({ root, journal, now: T + 4 * HOUR, annotation: first.annotation });
    assert.deepEqual(
      second.posted.map((p) => p.replace(/:.*/, '')),
      ['PreviousBootPanic', 'PreviousBootPanic'],
    );
    assert.ok(
      second.posted.some((p) => p.includes('kernel log in the journal')),
      "the journal's crash is posted, not taken for a replay",
    );
  });

  it('control: a dump stamped in the past keeps its time and counts nothing', async () => {
    const root = await host({ pstore: ['panic'], written: T - HOUR });
    const r = await start({ root, journal: '', now: T + HOUR, annotation: undefined });
    assert.deepEqual(times(r.found), [T - HOUR]);
    assert.equal(r.future.pstore, 0);
    assert.deepEqual(marks(r.annotation), { [CRASH_SOURCE]: T - HOUR });
  });
});

describe('an event watermark in the future on the Node', () => {
  const crash = T + 3 * HOUR;
  const now = T + 4 * HOUR;

  it('is ignored and counted, the crash is posted, and the annotation written back is healed', async () => {
    const forged = JSON.stringify({ [CRASH_SOURCE]: FUTURE });
    const root = await host();
    const r = await start({ root, journal: kernel(1, crash, PANIC, 0), now, annotation: forged });
    assert.equal(r.posted.length, 1, 'posted, not dropped as a replay');
    assert.equal(r.ignored, 1);
    assert.deepEqual(marks(r.annotation), { [CRASH_SOURCE]: crash });
  });

  it('control: a genuine watermark (the crash already posted by the last start) still suppresses it', async () => {
    const genuine = JSON.stringify({ [CRASH_SOURCE]: crash });
    const root = await host();
    const r = await start({ root, journal: kernel(1, crash, PANIC, 0), now, annotation: genuine });
    assert.deepEqual(r.posted, []);
    assert.equal(r.ignored, 0);
    assert.deepEqual(marks(r.annotation), { [CRASH_SOURCE]: crash });
  });
});
