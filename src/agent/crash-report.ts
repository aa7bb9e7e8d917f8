import { join } from 'node:path';
import type { Registry } from 'prom-client';
import type { Logger } from '../core/logger.ts';
import { counter, zeroed } from '../core/metrics.ts';
import type { Status } from '../core/types.ts';
import { hostPaths } from '../host/paths.ts';
import { readPstoreDmesg } from '../host/pstore.ts';
import { crashReports } from '../monitors/crash/pstore-report.ts';

/** The event source of the previous boot's crash reports. */
export const CRASH_SOURCE = 'pstore-monitor';

export interface CrashReportDeps {
  /** pstore is read at <hostRoot>/sys/fs/pstore. */
  readonly hostRoot: string;
  readonly bootId: string | undefined;
  readonly registry: Registry;
  readonly logger: Logger;
}

/**
 * At start-up, reports the crash that ended the previous boot, as the kernel left it in pstore (a
 * panic rarely reaches any log reader before the node reboots): one Warning event per dump. The
 * records stay until something deletes them, so a restarted agent finds them again; the event
 * watermark keeps it from posting them twice.
 */
/** Resolves when done and never rejects: a failure is logged. */
export function reportPreviousCrash(deps: CrashReportDeps, emit: (s: Status) => void): Promise<void> {
  return report(deps, emit).catch((err: unknown) =>
    deps.logger.warn({ err: String(err) }, 'reading pstore failed'),
  );
}

async function report(deps: CrashReportDeps, emit: (s: Status) => void): Promise<void> {
  const crashes = counter(deps.registry, {
    name: 'npd_previous_boot_crashes_total',
    help: 'Crash dumps of an earlier boot found in pstore at start-up, by kind.',
    labelNames: ['kind'],
  });
  const skipped = counter(deps.registry, {
    name: 'npd_pstore_records_skipped_total',
    help: 'pstore dmesg records or dumps not reported, by reason.',
    labelNames: ['reason'],
  });
  // Every known series exists from the start, so increase() sees the first crash (docs/metrics.md).
  zeroed(crashes, { kind: 'panic' }, { kind: 'oops' }, { kind: 'hard_lockup' });
  zeroed(skipped, { reason: 'compressed' }, { reason: 'oversized' }, { reason: 'no_crash' });
  const read = await readPstoreDmesg(join(hostPaths(deps.hostRoot).sys, 'fs', 'pstore'));
  for (const s of read.skipped) skipped.inc({ reason: s.reason });
  const { reports, withoutCrash } = crashReports(read.records, deps.bootId);
  if (withoutCrash > 0) skipped.inc({ reason: 'no_crash' }, withoutCrash);
  for (const r of reports) crashes.inc({ kind: r.kind });
  if (reports.length === 0) return;
  deps.logger.warn({ crashes: reports.map((r) => r.event.message) }, 'the previous boot crashed');
  emit({ source: CRASH_SOURCE, events: reports.map((r) => r.event), conditions: [] });
}
