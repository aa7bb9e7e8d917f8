import { readdir, readFile, readlink, stat } from 'node:fs/promises';
import { join } from 'node:path';

export interface InotifyUsage {
  /** Per uid: inotify instances and watches, the units the per-user limits count in. */
  readonly byUid: ReadonlyMap<number, { instances: number; watches: number }>;
}

/**
 * Counts inotify instances and watches per user by walking /proc/<pid>/fd. This costs a readlink per
 * open fd on the node, so it runs only when a config asks for it. Processes that exit mid-walk are
 * skipped.
 */
export async function countInotify(proc: string, signal: AbortSignal): Promise<InotifyUsage> {
  const byUid = new Map<number, { instances: number; watches: number }>();
  const pids = (await readdir(proc)).filter((name) => /^\d+$/.test(name));
  for (const pid of pids) {
    signal.throwIfAborted();
    const found = await inotifyFds(join(proc, pid));
    if (found.length === 0) continue;
    const uid = await stat(join(proc, pid)).then(
      (s) => s.uid,
      () => undefined,
    );
    if (uid === undefined) continue;
    const entry = byUid.get(uid) ?? { instances: 0, watches: 0 };
    for (const fd of found) {
      entry.instances++;
      entry.watches += await countWatches(join(proc, pid, 'fdinfo', fd));
    }
    byUid.set(uid, entry);
  }
  return { byUid };
}

async function inotifyFds(pidDir: string): Promise<string[]> {
  let fds: string[];
  try {
    fds = await readdir(join(pidDir, 'fd'));
  } catch {
    return [];
  }
  const out: string[] = [];
  for (const fd of fds) {
    const target = await readlink(join(pidDir, 'fd', fd)).catch(() => '');
    if (target === 'anon_inode:inotify') out.push(fd);
  }
  return out;
}

async function countWatches(fdinfo: string): Promise<number> {
  const text = await readFile(fdinfo, 'utf8').catch(() => '');
  return text.split('\n').filter((l) => l.startsWith('inotify wd:')).length;
}
