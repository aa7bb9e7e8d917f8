import { basename, dirname } from 'node:path';
import type { Logger } from '../../core/logger.ts';
import type { LineSplitter } from '../lines.ts';
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
  private seen = new Set<string>();

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
    this.seen = new Set([...this.siblings().map((s) => key(s.id)), ...known.map(key)]);
  }

  /** A file opened at the path: it was seen, whichever way the follower came to open it. */
  see(id: FileId): void {
    this.seen.add(key(id));
  }

  /** Files beside the path that no look has seen, oldest first; from now on all of them count as seen. */
  unseen(known: readonly FileId[]): Sibling[] {
    const listed = this.siblings();
    const knownKeys = new Set(known.map(key));
    const fresh = listed.filter((s) => !this.seen.has(key(s.id)) && !knownKeys.has(key(s.id)));
    this.seen = new Set([...listed.map((s) => key(s.id)), ...knownKeys]);
    return fresh.sort((a, b) => a.mtimeMs - b.mtimeMs);
  }
}

export interface MissedDeps {
  readonly fs: TailFs;
  readonly logger: Logger;
  readonly now: number;
  readonly splitter: () => LineSplitter;
  /** Queues an opened file behind the rotated files already being read. */
  readonly add: (f: OpenFile) => void;
  readonly onLost?: (bytes: number) => void;
  readonly onEvent?: (event: 'missed') => void;
}

/**
 * Each file rotated in and out between two looks at the path is read from its start (queued after the
 * older rotated files), or, when it cannot be opened, counted with its size as lost; either way it is
 * counted. A file rotated past and moved out of the directory at once leaves no trace to count.
 * Returns how many were found.
 */
export function adoptMissed(seen: SeenFiles, known: readonly FileId[], deps: MissedDeps): number {
  const missed = seen.unseen(known);
  for (const m of missed) {
    deps.onEvent?.('missed');
    try {
      const fd = deps.fs.openSync(m.path);
      const id = deps.fs.fstatSync(fd);
      if (!sameFile(id, m.id)) {
        deps.fs.closeSync(fd);
        throw new Error('replaced since it was listed');
      }
      deps.add(openedFile(fd, id, deps.now, deps.splitter()));
    } catch (err) {
      deps.onLost?.(m.id.size);
      const detail = { path: m.path, bytes: m.id.size, err: (err as Error).message };
      deps.logger.warn(detail, 'a log file rotated in and out unseen could not be read');
    }
  }
  return missed.length;
}
