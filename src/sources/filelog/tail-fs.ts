import * as nodeFs from 'node:fs';
import { basename, dirname, join, relative, resolve } from 'node:path';

export interface FileId {
  readonly dev: bigint;
  readonly ino: bigint;
  readonly size: number;
  readonly isFile: boolean;
  /**
   * Birth time in ns (0 where the file system keeps none), tells a reused inode number apart; unset
   * unless the file changed since its birth: without statx, libuv reports the change time as it.
   */
  readonly born?: bigint;
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
  born: s.birthtimeNs !== s.ctimeNs ? s.birthtimeNs : undefined,
});

/**
 * The real file system. A log is opened only if neither it nor any directory above it is a symbolic
 * link someone other than root (or the agent's own user) made. With `root` (--host-root), its directory
 * must also resolve inside the root, and it must belong to its directory's owner unless root owns the
 * directory: the agent reads as root, and whoever owns a log's directory (or one above it) could
 * otherwise point it at any file (a symlink, or a hard link to a root-only file).
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
  try {
    checkComponents(path, fd);
  } catch (err) {
    nodeFs.closeSync(fd);
    throw err;
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

const MAX_LINKS = 40;

/** Who may have made a link the agent follows: root, or the agent's own user. */
function trustedOwner(uid: number): boolean {
  return uid === 0 || uid === process.getuid?.();
}

/**
 * The directory with every symbolic link in it resolved, refusing a link a user could have made: a user
 * owning a directory above a log could otherwise swap a subdirectory for a link into a root-only one.
 */
function trustedDir(dir: string, depth = 0): string {
  let at = '/';
  for (const part of resolve(dir)
    .split('/')
    .filter((p) => p !== '')) {
    const next = join(at, part);
    const st = nodeFs.lstatSync(next);
    if (!st.isSymbolicLink()) at = next;
    else if (!trustedOwner(st.uid))
      throw refused('ELOOP', `${next} is a symbolic link owned by uid ${st.uid}; not followed to a log`);
    else if (depth >= MAX_LINKS) throw refused('ELOOP', `too many symbolic links above ${dir}`);
    else at = trustedDir(resolve(at, nodeFs.readlinkSync(next)), depth + 1);
  }
  return at;
}

/**
 * Checks the path's directories, then that the open fd is the file that path names now: a directory
 * swapped between the open and the check leaves the fd elsewhere (/proc/self/fd tells where).
 */
function checkComponents(path: string, fd: number): void {
  const expected = join(trustedDir(dirname(path)), basename(path));
  let actual: string;
  try {
    actual = nodeFs.readlinkSync(`/proc/self/fd/${fd}`);
  } catch {
    return;
  }
  if (actual !== expected)
    throw refused('ELOOP', `it was opened as ${actual}, not ${expected}; a directory above it changed`);
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
