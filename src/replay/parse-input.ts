import type { LogLine } from '../core/types.ts';
import { journalString } from '../sources/journald/entry.ts';
import { kmsgTimestampMs, parseKmsgStream } from '../sources/kmsg/parser.ts';

export type ReplayFormat = 'kmsg' | 'plain' | 'journal-json';

export interface ReplayLine extends LogLine {
  /** journald fields used by the journald plugin's filters. */
  readonly identifier?: string | undefined;
  readonly unit?: string | undefined;
  /** Set on journal entries: a journald config's matches then apply, as journalctl applies them. */
  readonly fromJournal?: boolean;
}

export interface ParsedInput {
  readonly lines: readonly ReplayLine[];
  /** Records that could not be parsed, with where they were. */
  readonly malformed: readonly string[];
}

/** Turns a log file into timestamped lines; nothing is skipped except unparsable and empty records. */
export function parseReplayInput(text: string, format: ReplayFormat, bootTimeMs: number): ParsedInput {
  if (format === 'kmsg') return fromKmsg(text, bootTimeMs);
  if (format === 'journal-json') return fromJournal(text);
  const lines = text
    .split(/\r?\n/)
    .map((l) => l.trim())
    .filter((l) => l !== '')
    .map((message) => ({ timestamp: bootTimeMs, message }));
  return { lines, malformed: [] };
}

function fromKmsg(text: string, bootTimeMs: number): ParsedInput {
  const lines: ReplayLine[] = [];
  const malformed: string[] = [];
  for (const rec of parseKmsgStream(text)) {
    if (rec instanceof Error) malformed.push(rec.message);
    else if (rec.message !== '')
      lines.push({ timestamp: kmsgTimestampMs(bootTimeMs, rec.usec), message: rec.message });
  }
  return { lines, malformed };
}

function fromJournal(text: string): ParsedInput {
  const lines: ReplayLine[] = [];
  const malformed: string[] = [];
  text.split(/\r?\n/).forEach((raw, i) => {
    if (raw.trim() === '') return;
    try {
      const entry = JSON.parse(raw) as Record<string, unknown>;
      const message = journalString(entry.MESSAGE).trim();
      const usec = Number(journalString(entry.__REALTIME_TIMESTAMP));
      if (!Number.isFinite(usec)) throw new Error('no __REALTIME_TIMESTAMP');
      const identifier = journalString(entry.SYSLOG_IDENTIFIER) || undefined;
      const unit = journalString(entry._SYSTEMD_UNIT) || undefined;
      if (message !== '')
        lines.push({ timestamp: Math.floor(usec / 1000), message, identifier, unit, fromJournal: true });
    } catch (err) {
      malformed.push(`line ${i + 1}: ${(err as Error).message}`);
    }
  });
  return { lines, malformed };
}
