/**
 * The machine-wide lock every /dev/kmsg flood, storm or ring wipe holds (`flock /tmp/kmsg-bench.lock`),
 * so two floods never overlap and an idle figure is not taken beside someone else's flood. A bench that
 * floods re-runs itself under flock(1) unless a process it descends from already holds the lock (as
 * with `flock /tmp/kmsg-bench.lock npm run bench -- ...`), which would otherwise deadlock.
 */
import { spawnSync } from 'node:child_process';
import { readFileSync, statSync } from 'node:fs';

export const KMSG_LOCK = '/tmp/kmsg-bench.lock';

/** Pids holding a flock(2) on the file with inode `inode`, from the text of /proc/locks. */
export function flockHolders(procLocks: string, inode: number): number[] {
  const out: number[] = [];
  for (const line of procLocks.split('\n')) {
    // "1: FLOCK  ADVISORY  WRITE 4242 00:1a:123456 0 EOF"; waiters carry "->" and hold nothing.
    const m = /^\d+:\s+FLOCK\s+\S+\s+\S+\s+(\d+)\s+[0-9a-f]+:[0-9a-f]+:(\d+)\s/.exec(line);
    if (m && Number(m[2]) === inode) out.push(Number(m[1]));
  }
  return out;
}

/** This process and every parent up to init. */
function ancestry(): Set<number> {
  const seen = new Set<number>();
  let pid = process.pid;
  while (pid > 0 && !seen.has(pid)) {
    seen.add(pid);
    try {
      const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
      pid = Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]);
    } catch {
      break;
    }
  }
  return seen;
}

export function lockHeldByAncestor(path = KMSG_LOCK): boolean {
  let inode: number;
  try {
    inode = statSync(path).ino;
  } catch {
    return false;
  }
  const mine = ancestry();
  return flockHolders(readFileSync('/proc/locks', 'utf8'), inode).some((pid) => mine.has(pid));
}

/**
 * Runs this very command again under `flock KMSG_LOCK` and returns its exit status, or undefined when
 * the lock is already ours (the caller then just goes on).
 */
export function rerunUnderLock(): number | undefined {
  if (lockHeldByAncestor()) return undefined;
  console.error(`taking ${KMSG_LOCK}: waits while another flood of /dev/kmsg holds it`);
  const argv = [...process.execArgv, ...process.argv.slice(1)];
  const r = spawnSync('flock', [KMSG_LOCK, process.execPath, ...argv], { stdio: 'inherit' });
  if (r.error) throw r.error;
  return r.status ?? 1;
}
