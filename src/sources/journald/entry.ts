import { truncateUtf8 } from '../../core/utf8.ts';

/**
 * Rules only look at the head of a message, and the rule engine joins up to `bufferSize` messages, so
 * a bound keeps matching cost and memory flat. 16 KiB is above the kernel's 8 KiB record limit and
 * the longest kubelet/containerd lines seen in practice, and well below journald's 48 KiB LineMax.
 */
export const MAX_MESSAGE_BYTES = 16 * 1024;

export interface JournalEntry {
  readonly cursor: string;
  /** Epoch milliseconds, from `__REALTIME_TIMESTAMP` (microseconds). */
  readonly timestamp: number;
  /** MESSAGE, trimmed like NPD does, and cut to MAX_MESSAGE_BYTES. */
  readonly message: string;
  readonly truncated: boolean;
}

/** Parses one line of `journalctl --output=json`; errors come back as values. */
export function parseJournalEntry(line: string): JournalEntry | Error {
  const record = parseJournalRecord(line);
  return record instanceof Error ? record : journalEntryOf(record);
}

/** One line of `journalctl --output=json` as its fields, for readers that need more than the entry. */
export function parseJournalRecord(line: string): Record<string, unknown> | Error {
  let raw: unknown;
  try {
    raw = JSON.parse(line);
  } catch (err) {
    return new Error(`invalid JSON: ${(err as Error).message}`);
  }
  if (typeof raw !== 'object' || raw === null || Array.isArray(raw)) return new Error('not a JSON object');
  return raw as Record<string, unknown>;
}

/** The entry of a parsed record: cursor, time and message. */
export function journalEntryOf(entry: Record<string, unknown>): JournalEntry | Error {
  const cursor = entry.__CURSOR;
  if (typeof cursor !== 'string' || cursor === '') return new Error('no __CURSOR');
  const usec = journalString(entry.__REALTIME_TIMESTAMP);
  if (!/^\d+$/.test(usec)) return new Error('no __REALTIME_TIMESTAMP');
  // Microseconds since 1970 exceed 2^53 only in the year 2255; slicing avoids the float rounding anyway.
  const timestamp = usec.length > 3 ? Number(usec.slice(0, -3)) : 0;
  const { text, truncated } = truncateUtf8(journalString(entry.MESSAGE).trim(), MAX_MESSAGE_BYTES);
  return { cursor, timestamp, message: text, truncated };
}

/** journalctl -o json writes binary-unsafe fields as byte arrays and repeated fields as arrays. */
export function journalString(v: unknown): string {
  if (typeof v === 'string') return v;
  if (Array.isArray(v) && v.every((b) => typeof b === 'number'))
    return Buffer.from(v as number[]).toString('utf8');
  if (Array.isArray(v) && typeof v[0] === 'string') return v[0];
  return '';
}
