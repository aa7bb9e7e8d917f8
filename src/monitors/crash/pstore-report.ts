import type { PstoreRecord } from '../../host/procfs/pstore.ts';
import { CRASH_REASONS, type CrashKind, type CrashReport, worstCrashLine } from './kernel-crash.ts';

/** One dump split over parts, and the dumps that hold no crash (a shutdown or emergency dump). */
export interface CrashReports {
  readonly reports: readonly CrashReport[];
  readonly withoutCrash: number;
}

// fs/pstore/platform.c pstore_dump(): "%s#%d Part%u\n" with kmsg_dump_reason_str() ("Panic", "Oops",
// "Emergency", "Shutdown", ...), the dump count and the part (Part1 holds the newest lines).
const HEADER = /^(\w+)#(\d+) Part(\d+)$/;
// kmsg_dump_get_buffer(..., syslog=true): "<level>" and, with printk.time, "[%5lu.%06lu] ".
const PREFIX = /^<\d+>(?:\[\s*\d+\.\d+\] )?/;

interface Dump {
  readonly why: string;
  readonly count: string;
  readonly names: string[];
  readonly parts: { part: number; lines: string[] }[];
  writtenAt: number;
}

/**
 * The previous boot's crashes from its pstore dmesg records: one report per dump (all its parts),
 * named after the worst thing in it (a hard lockup, then a panic, then an oops). Pure.
 */
export function crashReports(records: readonly PstoreRecord[], bootId: string | undefined): CrashReports {
  const reports: CrashReport[] = [];
  let withoutCrash = 0;
  for (const dump of group(records)) {
    const report = classify(dump, bootId);
    if (report) reports.push(report);
    else withoutCrash++;
  }
  return { reports, withoutCrash };
}

function group(records: readonly PstoreRecord[]): Dump[] {
  const dumps = new Map<string, Dump>();
  for (const r of records) {
    const [first = '', ...rest] = r.text.split('\n');
    const header = HEADER.exec(first.trim());
    const why = header?.[1] ?? 'Unknown';
    const count = header?.[2] ?? r.name;
    // dmesg-<backend>-<id>: parts of one dump share the backend, the reason and the count.
    const backend = /^dmesg-(.+)-[^-]+$/.exec(r.name)?.[1] ?? r.name;
    const key = `${backend}\u0000${why}\u0000${count}`;
    const lines = (header ? rest : [first, ...rest]).map((l) => l.replace(PREFIX, '').trim());
    const dump = dumps.get(key) ?? { why, count, names: [], parts: [], writtenAt: r.writtenAt };
    dump.names.push(r.name);
    dump.parts.push({ part: Number(header?.[3] ?? 1), lines });
    dump.writtenAt = Math.max(dump.writtenAt, r.writtenAt);
    dumps.set(key, dump);
  }
  return [...dumps.values()];
}

function classify(dump: Dump, bootId: string | undefined): CrashReport | undefined {
  // The highest part holds the oldest lines: read them first, so "first oops" means the first one.
  const lines = [...dump.parts].sort((a, b) => b.part - a.part).flatMap((p) => p.lines);
  const found = worstCrashLine(lines);
  // The kernel wrote the dump for a reason (Panic, Oops): it names the crash when no line kept does.
  const kind: CrashKind | undefined =
    found?.kind === 'hard_lockup' || found?.kind === 'panic'
      ? found.kind
      : dump.why === 'Panic'
        ? 'panic'
        : found || dump.why === 'Oops'
          ? 'oops'
          : undefined;
  if (!kind) return undefined;
  const key = found ? lines[found.index] : `${dump.why} dump`;
  const where = `${dump.why}#${dump.count} in pstore (${dump.names.join(', ')}), written ${new Date(dump.writtenAt).toISOString()}`;
  const boot = bootId ? `; reported at boot ${bootId}` : '';
  return {
    kind,
    event: {
      severity: 'warn',
      timestamp: dump.writtenAt,
      reason: CRASH_REASONS[kind],
      message: `previous boot: ${key} (${where}${boot})`,
    },
  };
}
