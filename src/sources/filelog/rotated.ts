import type { Clock } from '../../core/clock.ts';
import type { Logger } from '../../core/logger.ts';
import type { LineSplitter, SplitLine } from '../lines.ts';
import type { FileId, TailFs } from './tail-fs.ts';

/** A followed file descriptor and how far it has been read. */
export interface OpenFile {
  readonly fd: number;
  readonly id: FileId;
  offset: number;
  /** The largest size seen, to count what a truncation took away unread. */
  size: number;
  /** The last read reached the end of the file (rather than the read budget). */
  atEof: boolean;
  /** The last bytes before `offset`, to notice a file rewritten in place past our offset. */
  tail: Buffer;
  /** The file's first bytes (HEAD_BYTES at most): with `tail`, what tells a copy of it. */
  head: Buffer;
  /** Replaced when a copy of the file takes over its pending half line (copytruncate). */
  splitter: LineSplitter;
  lastDataAt: number;
}

/** A file just opened, read from its start unless `resume` says where reading stopped. */
export function openedFile(
  fd: number,
  id: FileId,
  now: number,
  splitter: LineSplitter,
  resume?: { readonly offset: number; readonly tail: Buffer; readonly head: Buffer },
): OpenFile {
  const offset = resume?.offset ?? 0;
  return {
    fd,
    id,
    offset,
    size: offset,
    atEof: false,
    tail: resume?.tail ?? Buffer.alloc(0),
    head: resume?.head ?? Buffer.alloc(0),
    splitter,
    lastDataAt: now,
  };
}

/** Rotated files kept open at once; past it the oldest is closed and its unread bytes counted lost. */
export const MAX_ROTATED_OPEN = 16;

export interface RotatedDeps {
  readonly fs: TailFs;
  readonly clock: Clock;
  readonly logger: Logger;
  readonly graceMs: number;
  /** Reads `f` up to `budget` bytes into `lines`; returns the budget left. */
  readonly read: (f: OpenFile, lines: SplitLine[], budget: number) => number;
  readonly close: (f: OpenFile) => void;
  readonly onLost: (bytes: number) => void;
}

/**
 * Files rotated away from the followed path, oldest first, each read to its end before the next: the
 * writer may still append to the newest of them until it reopens the path. A file is closed once it
 * has been read to its end and stayed quiet for the grace period.
 */
export class RotatedFiles {
  private readonly deps: RotatedDeps;
  private files: OpenFile[] = [];

  constructor(deps: RotatedDeps) {
    this.deps = deps;
  }

  get count(): number {
    return this.files.length;
  }

  get ids(): FileId[] {
    return this.files.map((f) => f.id);
  }

  add(f: OpenFile): void {
    f.lastDataAt = this.deps.clock.now();
    f.atEof = false;
    this.files.push(f);
    while (this.files.length > MAX_ROTATED_OPEN) {
      const oldest = this.files.shift() as OpenFile;
      this.lose(oldest, 'too many rotated files are still unread; closing the oldest');
    }
  }

  drain(lines: SplitLine[], budget: number): number {
    let left = budget;
    for (const f of this.files) {
      if (left <= 0) break;
      try {
        left = this.deps.read(f, lines, left);
      } catch (err) {
        this.deps.logger.warn({ err: (err as Error).message }, 'reading a rotated file failed; closing it');
        f.lastDataAt = Number.NEGATIVE_INFINITY;
        f.atEof = true;
      }
    }
    const now = this.deps.clock.now();
    this.files = this.files.filter((f) => {
      if (!f.atEof || now - f.lastDataAt < this.deps.graceMs) return true;
      // The writer has moved on, so this line will never be finished in this file; deliver what there is.
      const partial = f.splitter.flush();
      if (partial) lines.push(partial);
      this.lose(f, 'a rotated file was closed before its end after a read error; the rest is lost');
      return false;
    });
    return left;
  }

  closeAll(): void {
    for (const f of this.files) this.deps.close(f);
    this.files = [];
  }

  /** Closes `f`, counting what is left unread in it (nothing, for a file read to its quiet end). */
  private lose(f: OpenFile, why: string): void {
    let size = f.size;
    try {
      size = Math.max(size, this.deps.fs.fstatSync(f.fd).size);
    } catch {
      // the size last seen is all we know
    }
    const unread = size - f.offset;
    if (unread > 0) {
      this.deps.onLost(unread);
      this.deps.logger.warn({ bytes: unread }, why);
    }
    this.deps.close(f);
  }
}
