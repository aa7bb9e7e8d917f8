import type { Clock } from '../../core/clock.ts';
import type { Logger } from '../../core/logger.ts';
import type { SplitLine } from '../lines.ts';
import type { TailFs, WatchFn } from './tail-fs.ts';

/** What happened to the followed path, for metrics. */
export type TailEvent = 'rename' | 'truncate' | 'delete' | 'open_error' | 'read_error' | 'watch_error';

export interface FileTailOptions {
  readonly path: string;
  readonly clock: Clock;
  readonly logger: Logger;
  /** Complete lines, oldest first; once per poll that read something. */
  readonly onLines: (lines: readonly SplitLine[]) => void;
  readonly onEvent?: (event: TailEvent) => void;
  /** Bytes that can no longer be read: truncated away unread, or in a rotated file closed early. */
  readonly onLost?: (bytes: number) => void;
  /** A file rotated in and out between two looks at the path (read from beside it, or lost). */
  readonly onSkipped?: () => void;
  readonly fs?: TailFs;
  /** null: poll only. */
  readonly watch?: WatchFn | null;
  readonly pollIntervalMs?: number;
  readonly maxLineBytes?: number;
  /** A rotated-away file is read until it has been idle this long: writers reopen late. */
  readonly rotateGraceMs?: number;
  readonly maxBytesPerTick?: number;
}
