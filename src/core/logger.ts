import pino, { type Logger } from 'pino';
import { textLine } from './log-text.ts';

export type { Logger };

export type LogFormat = 'json' | 'text';

export interface LoggerOptions {
  readonly level?: string;
  /** Unset: text on a terminal, JSON otherwise (what `kubectl logs` and log pipelines read). */
  readonly format?: LogFormat;
  /** Where finished lines go; stdout by default. */
  readonly write?: (line: string) => void;
  readonly isTTY?: boolean;
}

/**
 * Synchronous logging: a node agent logs little, and an asynchronous destination loses its tail on a
 * signal (measured: 19,999 of 20,000 lines). Levels are names and times RFC 3339 UTC, because log
 * pipelines filter on `level="warn"` and a number means nothing to them.
 */
export function createLogger(o: LoggerOptions = {}): Logger {
  const write = o.write ?? stdout();
  const format = o.format ?? ((o.isTTY ?? process.stdout.isTTY) ? 'text' : 'json');
  const stream = { write: format === 'text' ? (line: string) => write(textLine(line)) : write };
  return pino(
    {
      level: o.level ?? 'info',
      base: { pid: process.pid },
      timestamp: pino.stdTimeFunctions.isoTime,
      formatters: { level: (label) => ({ level: label }) },
    },
    stream,
  );
}

function stdout(): (line: string) => void {
  const dest = pino.destination({ fd: 1, sync: true });
  return (line) => dest.write(line);
}

/** A logger that discards everything, for tests and for the replay subcommand. */
export function silentLogger(): Logger {
  return pino({ level: 'silent' });
}
