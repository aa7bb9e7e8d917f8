import type { ProblemEvent } from '../../core/types.ts';
import type { PstoreRecord } from '../../host/pstore.ts';

export type CrashKind = 'panic' | 'oops' | 'hard_lockup';

export interface CrashReport {
  readonly kind: CrashKind;
  readonly event: ProblemEvent;
}

/** One dump split over parts, and the dumps that hold no crash (a shutdown or emergency dump). */
export interface CrashReports {
  readonly reports: readonly CrashReport[];
  readonly withoutCrash: number;
}

const REASONS: Record<CrashKind, string> = {
  panic: 'PreviousBootPanic',
  oops: 'PreviousBootOops',
  hard_lockup: 'PreviousBootHardLockup',
};

// fs/pstore/platform.c pstore_dump(): "%s#%d Part%u\n" with kmsg_dump_reason_str() ("Panic", "Oops",
// "Emergency", "Shutdown", ...), the dump count and the part (Part1 holds the newest lines).
const HEADER = /^(\w+)#(\d+) Part(\d+)$/;
// kmsg_dump_get_buffer(..., syslog=true): "<level>" and, with printk.time, "[%5lu.%06lu] ".
const PREFIX = /^<\d+>(?:\[\s*\d+\.\d+\] )?/;
// The wordings of rules/kernel.yaml (kernel/watchdog.c, kernel/panic.c, lib/bug.c,
// arch/x86/kernel/dumpstack.c __die_header(), arch/x86/mm/fault.c show_fault_oops()).
const HARD_LOCKUP = /Watchdog detected hard LOCKUP on cpu \d+|Kernel panic - not syncing: Hard LOCKUP/;
const PANIC = /Kernel panic - not syncing: /;
const OOPS =
  /kernel BUG at [\w./-]+:\d+!|BUG: unable to handle |BUG: kernel NULL pointer dereference|(?:general protection fault|divide error|invalid opcode|stack segment|double fault|Oops)[^[]*: [0-9a-f]{4} \[#\d+\]/;

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
  const find = (re: RegExp) => lines.find((l) => re.test(l));
  const hard = find(HARD_LOCKUP);
  const panic = find(PANIC);
  const oops = find(OOPS);
  const kind: CrashKind | undefined = hard
    ? 'hard_lockup'
    : panic || dump.why === 'Panic'
      ? 'panic'
      : oops || dump.why === 'Oops'
        ? 'oops'
        : undefined;
  if (!kind) return undefined;
  const key =
    (kind === 'hard_lockup' ? hard : kind === 'panic' ? (panic ?? oops) : oops) ?? `${dump.why} dump`;
  const where = `${dump.why}#${dump.count} in pstore (${dump.names.join(', ')}), written ${new Date(dump.writtenAt).toISOString()}`;
  const boot = bootId ? `; reported at boot ${bootId}` : '';
  return {
    kind,
    event: {
      severity: 'warn',
      timestamp: dump.writtenAt,
      reason: REASONS[kind],
      message: `previous boot: ${key} (${where}${boot})`,
    },
  };
}
