/**
 * Parses the /dev/kmsg record format (kernel Documentation/ABI/testing/dev-kmsg):
 *
 *   <prio>,<seq>,<usec>,<flags>[,<more>...];<text>\n
 *    KEY=VALUE\n            (optional dictionary lines, each starting with one space)
 *
 * Pure: no I/O, never throws. Malformed input comes back as an Error so the caller can count it.
 */
import { goTrimSpace } from '../../gocompat/strings.ts';

export interface KmsgRecord {
  /** The raw prefix, `facility << 3 | level`. */
  readonly priority: number;
  /** 0 means the record came from the kernel: /dev/kmsg refuses facility 0 from userspace writes. */
  readonly facility: number;
  readonly level: number;
  readonly seq: number;
  /** Microseconds since boot on the kernel's monotonic clock (suspend time excluded). */
  readonly usec: number;
  /** `-` normally, `c` for a continuation fragment; empty when the field is absent. */
  readonly flags: string;
  /**
   * The text with `\xNN` escapes decoded and surrounding white space trimmed; never the dictionary.
   * A line feed inside the text stays `\x0a`, as NPD sees it (see messageText()).
   */
  readonly message: string;
  /** Dictionary lines such as SUBSYSTEM and DEVICE, values unescaped. */
  readonly dict: Readonly<Record<string, string>>;
}

/** Runs of escapes decode together so an escaped multi-byte UTF-8 character comes back whole. */
const ESCAPE_RUN = /(?:\\x[0-9a-fA-F]{2})+/g;

/** A record header starts a line: the ABI has at least prio, seq and usec before the flags. */
const RECORD_START = /^\d+,\d+,\d+[,;]/;
/** The sequence number of a record whose rest is unreadable, so its slot is not counted as lost. */
export const LEADING_SEQ = /^\d+,(\d+)[,;]/;

export function unescapeKmsg(text: string): string {
  if (!text.includes('\\x')) return text;
  return text.replace(ESCAPE_RUN, (run) => Buffer.from(run.replaceAll('\\x', ''), 'hex').toString('utf8'));
}

/**
 * The message rules see. Rules match up to the end of the newest line and RE2's `.` stops at a line
 * feed, so a decoded `\x0a` inside the text would end `EXT4-fs error .*` early and cost the match
 * that NPD, matching the escaped text, makes. Line feeds at the edges are trimmed first, as NPD's
 * TrimSpace would trim them had it decoded them; the ones inside are escaped again.
 */
export function messageText(text: string): string {
  const decoded = goTrimSpace(unescapeKmsg(text));
  return decoded.includes('\n') ? decoded.replaceAll('\n', '\\x0a') : decoded;
}

/** Wall-clock milliseconds of a record, given the boot time the caller derived from /proc/uptime. */
export function kmsgTimestampMs(bootTimeMs: number, usec: number): number {
  return bootTimeMs + Math.floor(usec / 1000);
}

function parseCount(field: string | undefined, name: string): number | Error {
  if (field === undefined || !/^\d+$/.test(field)) return new Error(`invalid ${name} field "${field ?? ''}"`);
  const value = Number(field);
  if (!Number.isSafeInteger(value)) return new Error(`${name} field "${field}" is out of range`);
  return value;
}

function parseDict(lines: readonly string[]): Record<string, string> | Error {
  const dict: Record<string, string> = {};
  for (const line of lines) {
    if (line === '') continue;
    if (!line.startsWith(' ')) return new Error(`dictionary line does not start with a space: "${line}"`);
    const eq = line.indexOf('=');
    // A bare key carries nothing a rule could use; keep the record rather than drop its text.
    if (eq <= 1) continue;
    dict[line.slice(1, eq)] = unescapeKmsg(line.slice(eq + 1));
  }
  return dict;
}

/** Parses one record as one read() of /dev/kmsg returns it (trailing newline optional). */
export function parseKmsgRecord(raw: string): KmsgRecord | Error {
  const semi = raw.indexOf(';');
  if (semi < 0) return new Error('no ";" between header and text');
  const header = raw.slice(0, semi).split(',');
  const priority = parseCount(header[0], 'priority');
  if (priority instanceof Error) return priority;
  const seq = parseCount(header[1], 'sequence');
  if (seq instanceof Error) return seq;
  const usec = parseCount(header[2], 'timestamp');
  if (usec instanceof Error) return usec;
  const [text = '', ...rest] = raw.slice(semi + 1).split('\n');
  const dict = parseDict(rest);
  if (dict instanceof Error) return dict;
  return {
    priority,
    facility: priority >> 3,
    level: priority & 7,
    seq,
    usec,
    flags: header[3] ?? '',
    message: messageText(text),
    dict,
  };
}

/**
 * Splits a text dump in raw /dev/kmsg format (what `replay --format kmsg` reads) into records:
 * a record starts at column 0 with `digits,digits,digits`, and lines starting with a space continue it.
 * Entries come back in input order; each malformed one is an Error whose message names its line.
 * Blank lines are framing, not records, and are ignored.
 */
export function parseKmsgStream(text: string): Array<KmsgRecord | Error> {
  const out: Array<KmsgRecord | Error> = [];
  let pending: string[] = [];
  let pendingLine = 0;
  const flush = (): void => {
    if (pending.length === 0) return;
    const parsed = parseKmsgRecord(pending.join('\n'));
    out.push(parsed instanceof Error ? new Error(`line ${pendingLine}: ${parsed.message}`) : parsed);
    pending = [];
  };
  const lines = text.split(/\r?\n/);
  for (const [index, line] of lines.entries()) {
    if (line.startsWith(' ') && pending.length > 0) {
      pending.push(line);
      continue;
    }
    flush();
    if (line === '') continue;
    if (RECORD_START.test(line)) {
      pending = [line];
      pendingLine = index + 1;
      continue;
    }
    out.push(new Error(`line ${index + 1}: not a kmsg record: "${line.slice(0, 80)}"`));
  }
  flush();
  return out;
}
