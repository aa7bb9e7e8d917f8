import * as nodeFs from 'node:fs';
import { dirname, join, relative } from 'node:path';

export interface FileId {
  readonly dev: bigint;
  readonly ino: bigint;
  readonly size: number;
  readonly isFile: boolean;
}

/** The same file: rotation gives the path a new inode, truncation keeps it. */
export function sameFile(a: FileId, b: FileId): boolean {
  return a.dev === b.dev && a.ino === b.ino;
}

/** A regular file in a directory, as listed (never through a link). */
export interface Sibling {
  readonly path: string;
  readonly id: FileId;
  readonly mtimeMs: number;
}

/** The file-system calls the follower makes, injected so failures can be simulated. */
export interface TailFs {
  openSync(path: string): number;
  readSync(fd: number, buffer: Buffer, length: number, position: number): number;
  fstatSync(fd: number): FileId;
  statSync(path: string): FileId;
  closeSync(fd: number): void;
  /** The regular files of a directory; without it, files rotated past unseen are not looked for. */
  listFiles?(dir: string): readonly Sibling[];
}

/** Watches a directory; calls back on any change in it. Throws when watching is impossible. */
export type WatchFn = (
  dir: string,
  onChange: (name: string | null) => void,
  onError: (err: Error) => void,
) => {
  close(): void;
};

const toId = (s: nodeFs.BigIntStats): FileId => ({
  dev: s.dev,
  ino: s.ino,
  size: Number(s.size),
  isFile: s.isFile(),
});

/**
 * The real file system. With `root` (--host-root), a log is opened only if its directory resolves
 * inside the root, the log itself is no symbolic link, and it belongs to its directory's owner unless
 * root owns the directory: the agent reads as root, and whoever owns a log's directory could otherwise
 * point it at any file (a symlink, or a hard link to a root-only file).
 */
export function nodeTailFs(confine: { readonly root?: string } = {}): TailFs {
  return {
    openSync: (path) => openLog(path, confine.root),
    readSync: (fd, buffer, length, position) => nodeFs.readSync(fd, buffer, 0, length, position),
    fstatSync: (fd) => toId(nodeFs.fstatSync(fd, { bigint: true })),
    statSync: (path) => toId(nodeFs.statSync(path, { bigint: true })),
    closeSync: (fd) => nodeFs.closeSync(fd),
    listFiles,
  };
}

function listFiles(dir: string): Sibling[] {
  let names: string[];
  try {
    names = nodeFs.readdirSync(dir);
  } catch {
    return [];
  }
  const out: Sibling[] = [];
  for (const name of names) {
    const path = join(dir, name);
    try {
      const s = nodeFs.lstatSync(path, { bigint: true });
      if (s.isFile()) out.push({ path, id: toId(s), mtimeMs: Number(s.mtimeMs) });
    } catch {
      // gone since the listing
    }
  }
  return out;
}

const { O_RDONLY, O_NONBLOCK, O_NOFOLLOW } = nodeFs.constants;

function refused(code: string, message: string): NodeJS.ErrnoException {
  return Object.assign(new Error(message), { code });
}

function openLog(path: string, root: string | undefined): number {
  if (root !== undefined) {
    const dir = nodeFs.realpathSync(dirname(path));
    const rel = relative(nodeFs.realpathSync(root), dir);
    if (rel.startsWith('..') || rel.startsWith('/')) {
      throw refused('EXDEV', `its directory resolves to ${dir}, outside the host root ${root}; not read`);
    }
  }
  let fd: number;
  try {
    // O_NONBLOCK: opening a FIFO placed at the path must not hang; regular files ignore the flag.
    fd = nodeFs.openSync(path, O_RDONLY | O_NONBLOCK | O_NOFOLLOW);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'ELOOP') throw err;
    throw refused('ELOOP', 'it is a symbolic link; log files are not followed through links');
  }
  if (root === undefined) return fd;
  try {
    const file = nodeFs.fstatSync(fd);
    const dir = nodeFs.statSync(dirname(path));
    if (dir.uid !== 0 && file.uid !== dir.uid) {
      throw refused(
        'EPERM',
        `it is owned by uid ${file.uid} but its directory by uid ${dir.uid}; not read (a file the directory's owner may have planted, e.g. a hard link)`,
      );
    }
  } catch (err) {
    nodeFs.closeSync(fd);
    throw err;
  }
  return fd;
}

export function nodeWatch(): WatchFn {
  return (dir, onChange, onError) => {
    const watcher = nodeFs.watch(dir, { persistent: false }, (_event, name) =>
      onChange(name ? String(name) : null),
    );
    watcher.on('error', onError);
    return watcher;
  };
}
