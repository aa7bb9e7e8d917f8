import { join } from 'node:path';
import type { Registry } from 'prom-client';
import type { Clock } from '../core/clock.ts';
import type { Evidence } from '../core/evidence.ts';
import type { Logger } from '../core/logger.ts';
import { counter, zeroed } from '../core/metrics.ts';
import { notAfter } from '../core/not-after.ts';
import type { ProblemEvent, Status } from '../core/types.ts';
import { hostPaths } from '../host/paths.ts';
import { readPstoreDmesg } from '../host/procfs/pstore.ts';
import {
  JOURNAL_SKIPS,
  type JournalReadDeps,
  type JournalReading,
  readPreviousBootJournal,
  sameCrashInPstore,
} from '../monitors/crash/journal-report.ts';
import { CRASH_KINDS, type CrashReport } from '../monitors/crash/kernel-crash.ts';
import { crashReports } from '../monitors/crash/pstore-report.ts';

/** The event source of the previous boot's crash reports, from pstore and from the journal alike. */
export const CRASH_SOURCE = 'pstore-monitor';

export interface CrashReportDeps {
  /** pstore is read at <hostRoot>/sys/fs/pstore, the journal at <hostRoot>/var/log/journal. */
  readonly hostRoot: string;
  readonly bootId: string | undefined;
  readonly clock: Clock;
  readonly registry: Registry;
  readonly logger: Logger;
  /** journalctl and the directory listing; tests replace them. */
  readonly journal?: Pick<JournalReadDeps, 'command' | 'spawn' | 'probe'>;
}

type Metrics = ReturnType<typeof crashMetrics>;

function crashMetrics(registry: Registry) {
  const crashes = counter(registry, {
    name: 'npd_previous_boot_crashes_total',
    help: 'Crashes of an earlier boot found at start-up, by kind and where they were found (pstore, journal).',
    labelNames: ['kind', 'origin'],
  });
  const pstoreSkipped = counter(registry, {
    name: 'npd_pstore_records_skipped_total',
    help: 'pstore dmesg records or dumps not reported, by reason.',
    labelNames: ['reason'],
  });
  const journalSkipped = counter(registry, {
    name: 'npd_previous_boot_journal_skipped_total',
    help: "Start-up reads of the previous boot's kernel lines in the journal that reported nothing, by reason.",
    labelNames: ['reason'],
  });
  const future = counter(registry, {
    name: 'npd_previous_boot_crashes_future_timestamp_total',
    help: "Previous-boot crash reports stamped later than the agent's clock, posted as of now, by where they were found (pstore, journal).",
    labelNames: ['origin'],
  });
  // Every known series exists from the start, so increase() sees the first crash (docs/metrics.md).
  for (const origin of ['pstore', 'journal']) {
    zeroed(crashes, ...CRASH_KINDS.map((kind) => ({ kind, origin })));
    zeroed(future, { origin });
  }
  zeroed(pstoreSkipped, { reason: 'compressed' }, { reason: 'oversized' }, { reason: 'no_crash' });
  zeroed(journalSkipped, ...JOURNAL_SKIPS.map((reason) => ({ reason })));
  return { crashes, pstoreSkipped, journalSkipped, future };
}

/**
 * At start-up, reports the crash that ended the previous boot (a panic rarely reaches any log reader
 * before the node reboots): one Warning event per pstore dump, and one for the previous boot's last
 * kernel lines in a persistent journal unless a pstore dump already reports that crash. pstore
 * records stay until something deletes them and the journal keeps old boots, so a restarted agent
 * finds them again; the event watermark keeps it from posting them twice.
 */
/** Resolves when done and never rejects: a failure is logged. */
export function reportPreviousCrash(deps: CrashReportDeps, emit: (s: Status) => void): Promise<void> {
  return report(deps, emit).catch((err: unknown) =>
    deps.logger.warn({ err: String(err) }, "reporting the previous boot's crash failed"),
  );
}

async function report(deps: CrashReportDeps, emit: (s: Status) => void): Promise<void> {
  const metrics = crashMetrics(deps.registry);
  // The journal is read even when pstore cannot be: each stands on its own.
  const pstore = await fromPstore(deps, metrics).catch((err: unknown) => {
    deps.logger.warn({ err: String(err) }, 'reading pstore failed');
    return [];
  });
  const journal = await fromJournal(deps, metrics, pstore);
  const reports = [...pstore, ...journal];
  if (reports.length === 0) return;
  deps.logger.warn({ crashes: reports.map((r) => r.event.message) }, 'the previous boot crashed');
  const events = [
    ...notAfterNow(deps, metrics, pstore, 'pstore'),
    ...notAfterNow(deps, metrics, journal, 'journal'),
  ];
  emit({ source: CRASH_SOURCE, events, conditions: [] });
}

/**
 * A report stamped later than now (a dump or journal line written while the clock ran ahead) counts
 * from now, as log lines do: posted with a time in the future, it would raise the source's event
 * watermark past now, and every later previous-boot crash report would then look already posted.
 */
function notAfterNow(
  deps: CrashReportDeps,
  m: Metrics,
  reports: readonly CrashReport[],
  origin: 'pstore' | 'journal',
): readonly ProblemEvent[] {
  // The kernel wrote both: pstore's dump at the crash, the journal's entries with _TRANSPORT=kernel
  // (--dmesg); the crash wording is searched outside the names the kernel quotes (docs/rules.md).
  const evidence: Evidence =
    origin === 'pstore'
      ? { source: CRASH_SOURCE, plugin: 'pstore', trust: 'kernel' }
      : { source: CRASH_SOURCE, plugin: 'journald', trust: 'kernel', writer: { transport: 'kernel' } };
  return notAfter(
    reports.map((r) => ({ ...r.event, evidence })),
    deps.clock.now(),
    (e) => {
      m.future.inc({ origin });
      const stamped = new Date(e.timestamp).toISOString();
      deps.logger.warn({ crash: e.message, stamped }, 'a crash report stamped in the future counts from now');
    },
  );
}

async function fromPstore(deps: CrashReportDeps, m: Metrics): Promise<readonly CrashReport[]> {
  const read = await readPstoreDmesg(join(hostPaths(deps.hostRoot).sys, 'fs', 'pstore'));
  for (const s of read.skipped) m.pstoreSkipped.inc({ reason: s.reason });
  const { reports, withoutCrash } = crashReports(read.records, deps.bootId);
  if (withoutCrash > 0) m.pstoreSkipped.inc({ reason: 'no_crash' }, withoutCrash);
  for (const r of reports) m.crashes.inc({ kind: r.kind, origin: 'pstore' });
  return reports;
}

async function fromJournal(
  deps: CrashReportDeps,
  m: Metrics,
  pstore: readonly CrashReport[],
): Promise<readonly CrashReport[]> {
  const read: JournalReading = await readPreviousBootJournal({
    paths: hostPaths(deps.hostRoot),
    clock: deps.clock,
    bootId: deps.bootId,
    ...deps.journal,
  }).catch((err: unknown) => ({ skipped: { reason: 'journalctl_failed', detail: String(err) } }) as const);
  const log = deps.logger.child({ journal: 'previous boot' });
  noteSkipped(read, m, log);
  const crash = read.crash;
  if (!crash) return [];
  const same = sameCrashInPstore(crash, pstore);
  if (same) {
    m.journalSkipped.inc({ reason: 'duplicate' });
    const fields = { journal: crash.event.message, pstore: same.event.message };
    log.info(fields, 'the journal and pstore hold the same crash; reported once, from pstore');
    return [];
  }
  m.crashes.inc({ kind: crash.kind, origin: 'journal' });
  return [crash];
}

/** Counts and logs why the journal gave no report; garbage lines beside good ones are counted too. */
function noteSkipped(read: JournalReading, m: Metrics, log: Logger): void {
  if (read.malformed) {
    m.journalSkipped.inc({ reason: 'malformed' });
    log.warn(read.malformed, 'journalctl printed lines that are not journal entries');
  }
  if (!read.skipped) return;
  const { reason, detail } = read.skipped;
  if (reason !== 'malformed') m.journalSkipped.inc({ reason });
  log[reason === 'journalctl_failed' ? 'warn' : 'info'](
    { reason, detail },
    'no crash report from the journal',
  );
}
