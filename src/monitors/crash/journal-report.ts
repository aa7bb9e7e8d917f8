import { join } from 'node:path';
import type { Clock } from '../../core/clock.ts';
import { bootIdFromJournal } from '../../host/procfs/boot-id.ts';
import { type BoundedOutput, runBounded, type SpawnFn } from '../../host/process/bounded-command.ts';
import type { HostPaths } from '../../host/paths.ts';
import {
  type DirProbe,
  holdsJournalFiles,
  journalJsonArgs,
  PERSISTENT_JOURNAL,
} from '../../sources/journald/args.ts';
import { journalEntryOf, journalString, parseJournalRecord } from '../../sources/journald/entry.ts';
import { nodeDirProbe } from '../../sources/journald/source.ts';
import { CRASH_REASONS, type CrashReport, worstCrashLine } from './kernel-crash.ts';

/** The previous boot's newest kernel lines read: a crash is at the end of a boot, not at its start. */
export const PREVIOUS_BOOT_LINES = 200;
/** 200 entries with kernel records of up to 8 KiB each, with room to spare. */
const MAX_OUTPUT_BYTES = 4 * 1024 * 1024;
/** journalctl finds the boots by walking the journal's files: seconds on a big journal. */
const TIMEOUT_MS = 30_000;
/**
 * A pstore dump written this close to the journal's last kernel line of a boot is the crash that ended
 * that boot, so both report the same crash. At a panic journald stops seconds before the dump is
 * written; after an oops the node may run on for a while, and a dump from another boot is hours away.
 */
export const SAME_CRASH_MS = 5 * 60_000;

/** Why the previous boot's journal gave no report. */
export const JOURNAL_SKIPS = [
  'no_journal',
  'no_previous_boot',
  'journalctl_failed',
  'malformed',
  'no_crash',
  'duplicate',
] as const;

export type JournalSkip = (typeof JOURNAL_SKIPS)[number];

export interface JournalCrash extends CrashReport {
  /** When journald wrote the last kernel line of that boot (epoch ms). */
  readonly lastLineAt: number;
}

export interface JournalReading {
  readonly crash?: JournalCrash;
  readonly skipped?: { readonly reason: Exclude<JournalSkip, 'duplicate'>; readonly detail: string };
  /** Output lines that were not journal entries: how many, and the first one. */
  readonly malformed?: { readonly count: number; readonly sample: string };
}

export interface JournalReadDeps {
  /** The journal is read at <root>/var/log/journal: only the persistent journal outlives a boot. */
  readonly paths: HostPaths;
  readonly clock: Clock;
  /** This boot's ID: the previous boot is the one before it. */
  readonly bootId: string | undefined;
  readonly command?: string;
  readonly spawn?: SpawnFn;
  readonly probe?: DirProbe;
}

interface KernelLine {
  readonly timestamp: number;
  readonly message: string;
  readonly bootId: string;
}

/**
 * At start-up, the kernel lines that ended the previous boot, from the host's persistent journal,
 * named after their worst line with the classifier pstore dumps use. Never rejects: a missing
 * journal or a failing journalctl comes back as the reason nothing was found.
 */
export async function readPreviousBootJournal(deps: JournalReadDeps): Promise<JournalReading> {
  const directory = join(deps.paths.root, PERSISTENT_JOURNAL);
  if (!holdsJournalFiles(directory, deps.probe ?? nodeDirProbe())) {
    const detail = `no journal files in ${directory}: the host's journal is not persistent`;
    return { skipped: { reason: 'no_journal', detail } };
  }
  const cmd = {
    command: deps.command ?? 'journalctl',
    args: previousBootArgs(directory, deps.bootId),
    maxBytes: MAX_OUTPUT_BYTES,
    timeoutMs: TIMEOUT_MS,
    keep: 'tail' as const,
  };
  const out = await runBounded(cmd, deps.clock, deps.spawn).catch(notStarted);
  return failure(out) ?? classify(out, deps.bootId);
}

/**
 * `--boot=<this boot>-1` is the boot before this one, and fails when there is none. A bare `-1` counts
 * back from the newest boot in the files, which is this one only once journald has written it; it is
 * used when this boot's ID is unknown. `--dmesg` matches _TRANSPORT=kernel.
 */
export function previousBootArgs(directory: string, bootId: string | undefined): string[] {
  const boot = bootId ? `${bootId.replaceAll('-', '')}-1` : '-1';
  return ['--dmesg', `--boot=${boot}`, `--lines=${PREVIOUS_BOOT_LINES}`, ...journalJsonArgs(directory)];
}

function notStarted(err: unknown): BoundedOutput {
  return { stdout: '', stderr: '', truncated: false, timedOut: false, code: undefined, error: String(err) };
}

// journalctl's words for a boot the journal does not hold: systemd 252 add_boot() ("Data from the
// specified boot (-1) is not available: No such boot ID in journal", seen with /usr/bin/journalctl
// here); later versions (src/journal/journalctl-filter.c) "No journal boot entry found ...".
const NO_SUCH_BOOT = /No such boot ID in journal|No journal boot entry found/;

function failure(out: BoundedOutput): JournalReading | undefined {
  const stderr = out.stderr.trim().slice(0, 300);
  const failed = (detail: string): JournalReading => ({ skipped: { reason: 'journalctl_failed', detail } });
  if (out.code === undefined) return failed(`journalctl not runnable: ${out.error ?? 'unknown error'}`);
  if (out.timedOut) return failed(`journalctl did not finish within ${TIMEOUT_MS / 1000} s`);
  if (out.code === 0) return undefined;
  if (NO_SUCH_BOOT.test(out.stderr)) return { skipped: { reason: 'no_previous_boot', detail: stderr } };
  return failed(`journalctl exited ${out.code ?? 'on a signal'}: ${stderr}`);
}

function classify(out: BoundedOutput, thisBoot: string | undefined): JournalReading {
  const { lines, malformed } = parse(out);
  const bad = malformed.count > 0 ? { malformed } : {};
  if (lines.length === 0) {
    if (malformed.count > 0)
      return { skipped: { reason: 'malformed', detail: 'no journal entry in the output' }, ...bad };
    const detail = 'the journal holds no kernel line of a boot before this one';
    return { skipped: { reason: 'no_previous_boot', detail }, ...bad };
  }
  const found = worstCrashLine(lines.map((l) => l.message));
  const last = lines[lines.length - 1] as KernelLine;
  const boot = bootIdFromJournal(last.bootId) ?? (last.bootId || 'unknown');
  if (!found) {
    const detail = `boot ${boot} ended without a crash line in its last ${lines.length} kernel lines`;
    return { skipped: { reason: 'no_crash', detail }, ...bad };
  }
  const line = lines[found.index] as KernelLine;
  return { crash: crashOf({ kind: found.kind, line, last, boot }, thisBoot), ...bad };
}

function parse(out: BoundedOutput): { lines: KernelLine[]; malformed: { count: number; sample: string } } {
  // A tail kept within the byte limit starts mid-line.
  const text = out.truncated ? out.stdout.slice(out.stdout.indexOf('\n') + 1) : out.stdout;
  const lines: KernelLine[] = [];
  const malformed = { count: 0, sample: '' };
  for (const raw of text.split('\n')) {
    if (raw.trim() === '') continue;
    const line = kernelLine(raw);
    if (!(line instanceof Error)) lines.push(line);
    else if (malformed.count++ === 0) malformed.sample = `${line.message}: ${raw.slice(0, 200)}`;
  }
  return { lines, malformed };
}

function kernelLine(text: string): KernelLine | Error {
  const record = parseJournalRecord(text);
  if (record instanceof Error) return record;
  const entry = journalEntryOf(record);
  if (entry instanceof Error) return entry;
  return { timestamp: entry.timestamp, message: entry.message, bootId: journalString(record._BOOT_ID) };
}

interface Found {
  readonly kind: JournalCrash['kind'];
  readonly line: KernelLine;
  readonly last: KernelLine;
  readonly boot: string;
}

function crashOf({ kind, line, last, boot }: Found, thisBoot: string | undefined): JournalCrash {
  const at = (ms: number) => new Date(ms).toISOString();
  const reported = thisBoot ? `; reported at boot ${thisBoot}` : '';
  return {
    kind,
    lastLineAt: last.timestamp,
    event: {
      severity: 'warn',
      timestamp: line.timestamp,
      reason: CRASH_REASONS[kind],
      message: `previous boot ${boot}: ${line.message} (kernel log in the journal, logged ${at(line.timestamp)}, last kernel line ${at(last.timestamp)}${reported})`,
    },
  };
}

/** The pstore report of the same crash: a dump written within SAME_CRASH_MS of the boot's last line. */
export function sameCrashInPstore(
  crash: JournalCrash,
  pstore: readonly CrashReport[],
): CrashReport | undefined {
  return pstore.find((r) => Math.abs(r.event.timestamp - crash.lastLineAt) <= SAME_CRASH_MS);
}
