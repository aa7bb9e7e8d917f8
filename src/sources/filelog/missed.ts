import { basename, dirname } from 'node:path';
import type { Clock } from '../../core/clock.ts';
import type { Logger } from '../../core/logger.ts';
import { SampledWarning } from '../../core/sampled-warning.ts';
import type { LineSplitter } from '../lines.ts';
import { isCopyOf, type ReadSoFar } from './copytruncate.ts';
import { type OpenFile, openedFile } from './rotated.ts';
import { type FileId, type Sibling, sameFile, type TailFs } from './tail-fs.ts';

type ListFiles = (dir: string) => readonly Sibling[];

// logrotate and most rotators compress older generations; their bytes are not log lines.
const COMPRESSED = /\.(?:gz|bz2|xz|zst|lz4|lzma|z|zip)$/i;
const key = (id: FileId) => `${id.dev}:${id.ino}`;

/** Names a rotator gives a log: <name>.1, <name>-20260101, <name>.2026-01-01, never compressed. */
export function isRotatedName(base: string, name: string): boolean {
  if (name.length <= base.length + 1 || !name.startsWith(base)) return false;
  const sep = name[base.length];
  return (sep === '.' || sep === '-' || sep === '_') && !COMPRESSED.test(name);
}

/**
 * The inodes seen beside the followed path. A file rotated in and out between two looks at the path
 * (while the reader was behind) never was at the path when the reader looked; it is still reachable if
 * the rotator left it beside the path under a rotated name, as an inode no look has seen.
 */
export class SeenFiles {
  private readonly list: ListFiles;
  private readonly path: string;
  /** Birth times by inode, where known. */
  private seen = new Map<string, bigint | undefined>();

  constructor(path: string, list: ListFiles) {
    this.path = path;
    this.list = list;
  }

  private siblings(): Sibling[] {
    const base = basename(this.path);
    const dir = dirname(this.path);
    return this.list(dir).filter(
      (s) => s.path !== this.path && isRotatedName(base, s.path.slice(dir.length + 1)),
    );
  }

  /** The first look: whatever is beside the path already is an older generation, not ours to read. */
  baseline(known: readonly FileId[]): void {
    this.seen = new Map();
    for (const id of [...this.siblings().map((s) => s.id), ...known]) this.see(id);
  }

  /** A file opened at the path: it was seen, whichever way the follower came to open it. */
  see(id: FileId): void {
    this.seen.set(key(id), id.born ?? this.seen.get(key(id)));
  }

  /** Files beside the path that no look has seen, oldest first; from now on all of them count as seen. */
  unseen(known: readonly FileId[]): Sibling[] {
    const listed = this.siblings();
    const fresh = this.fresh(listed, known);
    this.seen = new Map();
    for (const id of [...listed.map((s) => s.id), ...known]) this.see(id);
    return fresh.sort((a, b) => a.mtimeMs - b.mtimeMs);
  }

  /** Files beside the path that no look has seen, as `unseen`, but none is marked seen. */
  unread(known: readonly FileId[]): Sibling[] {
    return this.fresh(this.siblings(), known);
  }

  private fresh(listed: readonly Sibling[], known: readonly FileId[]): Sibling[] {
    // Held open, so their inode numbers cannot have been given to another file.
    const held = new Set(known.map(key));
    return listed.filter((s) => !this.wasSeen(s.id) && !held.has(key(s.id)));
  }

  /**
   * Seen, unless the inode number was freed and given to a new file since (ext4 and xfs reuse them at
   * once, e.g. when `rotate N` drops the oldest generation): then its birth time differs.
   */
  private wasSeen(id: FileId): boolean {
    if (!this.seen.has(key(id))) return false;
    const born = this.seen.get(key(id));
    return born === undefined || born === id.born;
  }
}

export interface SkippedDeps {
  readonly path: string;
  readonly fs: TailFs;
  readonly list: ListFiles;
  readonly clock: Clock;
  readonly logger: Logger;
  readonly splitter: () => LineSplitter;
  /** Queues an opened file behind the rotated files already being read. */
  readonly add: (f: OpenFile) => void;
  readonly onLost?: (bytes: number) => void;
  readonly onSkipped?: () => void;
}

/**
 * Generations of the path the follower skipped: each new file opened at the path is a look, and a
 * rotated-name inode beside the path that no look saw is a file rotated in and out between two looks
 * (whether the path was then found replaced or missing). Each is counted, read from its start (queued
 * after the older rotated files) or, when it cannot be opened, its size counted as lost. A file rotated
 * past and removed, compressed or moved out of the directory before the next look leaves no trace to
 * count.
 */
export class SkippedFiles {
  private readonly deps: SkippedDeps;
  private readonly seen: SeenFiles;
  private readonly warning: SampledWarning;
  private baselined = false;

  constructor(deps: SkippedDeps) {
    this.deps = deps;
    this.seen = new SeenFiles(deps.path, deps.list);
    this.warning = new SampledWarning(
      () => deps.clock.now(),
      (fields) => deps.logger.warn(fields, 'log files were rotated in and out between two looks at the path'),
    );
  }

  /**
   * A file opened at the path; `rotated` are the older ones still open. The first look only notes what
   * is there; a reopen of the file read before (`resumed`) is no new look. Returns the files found
   * skipped, queued or counted lost.
   */
  opened(id: FileId, rotated: readonly FileId[], resumed: boolean): number {
    if (!this.baselined) {
      this.baselined = true;
      this.seen.baseline([id]);
      return 0;
    }
    this.seen.see(id);
    if (resumed) return 0;
    const skipped = this.seen.unseen([...rotated, id]);
    for (const s of skipped) this.adopt(s.path, s.id);
    return skipped.length;
  }

  /** Stopped: the next start reads the path afresh, so what is beside it then is older again. */
  reset(): void {
    this.baselined = false;
  }

  /**
   * The copy copytruncate made of a file just found truncated (`read`: what was read of it), if one is
   * beside the path: opened where reading had reached, with `splitter` (the half line read last), and
   * seen from now on, so no later look reads it again as a skipped file. `held`: the files open now.
   */
  copyOf(read: ReadSoFar, held: readonly FileId[], splitter: LineSplitter): OpenFile | undefined {
    if (!this.baselined) return undefined;
    for (const s of this.seen.unread(held)) {
      let fd: number | undefined;
      try {
        fd = this.deps.fs.openSync(s.path);
        const id = this.deps.fs.fstatSync(fd);
        if (sameFile(id, s.id) && isCopyOf(this.deps.fs, fd, id.size, read)) {
          this.seen.see(id);
          return openedFile(fd, id, this.deps.clock.now(), splitter, read);
        }
      } catch {
        // Unreadable now: the next look counts it, as a skipped file.
      }
      if (fd !== undefined) this.deps.fs.closeSync(fd);
    }
    return undefined;
  }

  private adopt(path: string, listed: FileId): void {
    this.deps.onSkipped?.();
    try {
      const fd = this.deps.fs.openSync(path);
      const id = this.deps.fs.fstatSync(fd);
      if (!sameFile(id, listed)) {
        this.deps.fs.closeSync(fd);
        throw new Error('replaced since it was listed');
      }
      this.deps.add(openedFile(fd, id, this.deps.clock.now(), this.deps.splitter()));
      this.warning.note(() => ({ path, bytes: listed.size, read: true }));
    } catch (err) {
      this.deps.onLost?.(listed.size);
      this.warning.note(() => ({ path, bytes: listed.size, read: false, err: (err as Error).message }));
    }
  }
}
