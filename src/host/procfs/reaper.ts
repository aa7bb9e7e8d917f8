import { readdir, readFile } from 'node:fs/promises';
import { join } from 'node:path';
import type { Registry } from 'prom-client';
import type { Logger } from '../../core/logger.ts';
import { counter, gauge } from '../../core/metrics.ts';

/**
 * Zombie hygiene for plugin descendants (NPD issues #726, #941).
 *
 * A plugin that forks and exits leaves its children to be re-parented to PID 1; when they die, only
 * PID 1 can reap them. NPD's image runs NPD itself as PID 1 and never reaps, so `<defunct>` entries pile
 * up. Node cannot do better by itself: libuv only waitpid()s the pids it spawned, and there is no
 * waitpid(-1) or PR_SET_CHILD_SUBREAPER in Node's API. So the fix is layered:
 *
 * 1. Our image runs the agent under `tini` as PID 1 (ENTRYPOINT ["/sbin/tini", "--", ...]) or the pod
 *    uses `shareProcessNamespace`; tini reaps every orphan. This is the real fix.
 * 2. A timed-out plugin's whole process group is SIGKILLed (monitors/custom-plugin/exec.ts), so hung
 *    descendants do not outlive their run; the usual source of orphans is gone.
 * 3. Without tini, the agent as PID 1 reaps orphans itself (pid1-reaper.ts, waitpid through koffi).
 * 4. This module makes whatever remains visible: the gauge npd_zombie_processes counts zombies whose
 *    parent is the agent (orphans re-parented to it when it is PID 1), and a warning says what to do.
 */

export interface ProcFs {
  readdir(path: string): Promise<string[]>;
  readFile(path: string, encoding: 'utf8'): Promise<string>;
}

export interface ProcStat {
  readonly pid: number;
  readonly comm: string;
  readonly state: string;
  readonly ppid: number;
}

/** Parses /proc/<pid>/stat. comm may hold spaces and parentheses, so it ends at the LAST ')'. */
export function parseProcStat(text: string): ProcStat | undefined {
  const open = text.indexOf('(');
  const close = text.lastIndexOf(')');
  if (open < 0 || close < open) return undefined;
  const pid = Number(text.slice(0, open).trim());
  const [state, ppid] = text
    .slice(close + 1)
    .trim()
    .split(/\s+/);
  if (!Number.isInteger(pid) || state === undefined || ppid === undefined) return undefined;
  return { pid, comm: text.slice(open + 1, close), state, ppid: Number(ppid) };
}

/** Zombies (state Z) whose parent is `parentPid`, read from `procPath` (our PID namespace's /proc). */
export async function findZombies(procPath: string, parentPid: number, fs: ProcFs): Promise<ProcStat[]> {
  const zombies: ProcStat[] = [];
  for (const name of await fs.readdir(procPath)) {
    if (!/^\d+$/.test(name)) continue;
    let text: string;
    try {
      text = await fs.readFile(join(procPath, name, 'stat'), 'utf8');
    } catch {
      continue; // The process went away between readdir and read.
    }
    const stat = parseProcStat(text);
    if (stat?.state === 'Z' && stat.ppid === parentPid) zombies.push(stat);
  }
  return zombies;
}

export interface ZombieWatchOptions {
  readonly registry: Registry;
  readonly logger: Logger;
  /** The agent's pid (process.pid); zombies are counted under it. PID 1 is when orphans land on us. */
  readonly pid: number;
  /** The agent's own /proc, not --host-root's: zombies live in our PID namespace. */
  readonly procPath?: string;
  readonly fs?: ProcFs;
}

export interface ZombieWatch {
  /** Scans now; also what the gauge runs at scrape time. */
  scan(): Promise<number>;
}

/**
 * Registers npd_zombie_processes (read at scrape time) once per registry, and warns once when the
 * agent is PID 1 with nothing to reap for it. Calling it again with the same registry is harmless.
 */
export function watchZombies(options: ZombieWatchOptions): ZombieWatch {
  const procPath = options.procPath ?? '/proc';
  const fs = options.fs ?? { readdir: (p) => readdir(p), readFile: (p, e) => readFile(p, e) };
  const { registry, logger, pid } = options;
  const fresh = registry.getSingleMetric('npd_zombie_processes') === undefined;
  const failures = counter(registry, {
    name: 'npd_zombie_scan_errors_total',
    help: 'Failed scans of /proc for zombie processes.',
  });
  let warned = false;
  const scan = async (): Promise<number> => {
    try {
      const zombies = await findZombies(procPath, pid, fs);
      if (zombies.length > 0 && !warned) {
        warned = true;
        const sample = zombies.slice(0, 5).map((z) => `${z.pid} (${z.comm})`);
        logger.warn(
          { count: zombies.length, sample },
          'zombie processes are waiting to be reaped by the agent; run it under tini',
        );
      }
      return zombies.length;
    } catch (err) {
      failures.inc();
      logger.debug({ err: (err as Error).message, procPath }, 'cannot scan for zombie processes');
      return 0;
    }
  };
  gauge(registry, {
    name: 'npd_zombie_processes',
    help: 'Zombie processes whose parent is the agent; above 0 means no init reaps orphaned plugin descendants.',
    collect: async (g) => g.set(await scan()),
  });
  if (fresh && pid === 1) {
    logger.warn('running as PID 1: the agent reaps orphaned plugin descendants itself; tini is better');
  }
  return { scan };
}
