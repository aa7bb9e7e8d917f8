import type { StatsFs } from 'node:fs';
import { statfs as fsStatfs } from 'node:fs/promises';
import { join } from 'node:path';
import { errorCode, errorMessage } from '../../core/errors.ts';

export type StatfsFn = (path: string) => Promise<StatsFs>;

export const realStatfs: StatfsFn = (path) => fsStatfs(path);

export interface FsUsage {
  readonly path: string;
  readonly used: number;
  readonly total: number;
  readonly percent: number;
}

/** One measurement per path; `undefined` when the measure does not apply to that file system. */
export type Measure = (s: StatsFs) => { used: number; total: number } | undefined;

/** df's "Use%": used / (used + available to unprivileged users), so reserved blocks count as full. */
export const blockUsage: Measure = (s) => {
  const used = s.blocks - s.bfree;
  const total = used + s.bavail;
  return s.blocks > 0 && total > 0 ? { used: used * s.bsize, total: total * s.bsize } : undefined;
};

/** File systems that allocate inodes on demand (btrfs, some FUSE) report zero files: no limit. */
export const inodeUsage: Measure = (s) =>
  s.files > 0 ? { used: s.files - s.ffree, total: s.files } : undefined;

export interface UsageReport {
  readonly measured: readonly FsUsage[];
  /** Paths that could not be measured, with why; a missing path is not an error. */
  readonly skipped: readonly string[];
}

/**
 * Measures each configured path below the host root. A statfs on a dead network mount blocks a
 * libuv thread, so the caller's timeout ends the wait and the monitor will not start another run of
 * the same probe until this one returns.
 */
export async function measurePaths(
  root: string,
  paths: readonly string[],
  measure: Measure,
  statfs: StatfsFn,
): Promise<UsageReport> {
  const measured: FsUsage[] = [];
  const skipped: string[] = [];
  for (const path of paths) {
    let stats: StatsFs;
    try {
      stats = await statfs(join(root, path));
    } catch (err) {
      if (errorCode(err) !== 'ENOENT') throw new Error(`statfs ${path}: ${errorMessage(err)}`);
      skipped.push(`${path} (not found)`);
      continue;
    }
    const m = measure(stats);
    if (!m) {
      skipped.push(`${path} (no limit)`);
      continue;
    }
    const percent = m.total > 0 ? Math.floor((m.used * 1000) / m.total) / 10 : 0;
    measured.push({ path, used: m.used, total: m.total, percent });
  }
  return { measured, skipped };
}
