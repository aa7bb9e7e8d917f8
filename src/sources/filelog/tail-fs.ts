import * as nodeFs from 'node:fs';

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

/** The file-system calls the follower makes, injected so failures can be simulated. */
export interface TailFs {
  openSync(path: string): number;
  readSync(fd: number, buffer: Buffer, length: number, position: number): number;
  fstatSync(fd: number): FileId;
  statSync(path: string): FileId;
  closeSync(fd: number): void;
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

export function nodeTailFs(): TailFs {
  return {
    // O_NONBLOCK: opening a FIFO placed at the path must not hang; regular files ignore the flag.
    openSync: (path) => nodeFs.openSync(path, nodeFs.constants.O_RDONLY | nodeFs.constants.O_NONBLOCK),
    readSync: (fd, buffer, length, position) => nodeFs.readSync(fd, buffer, 0, length, position),
    fstatSync: (fd) => toId(nodeFs.fstatSync(fd, { bigint: true })),
    statSync: (path) => toId(nodeFs.statSync(path, { bigint: true })),
    closeSync: (fd) => nodeFs.closeSync(fd),
  };
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
