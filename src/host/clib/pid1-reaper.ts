import type { Registry } from 'prom-client';
import type { Clock, TimerHandle } from '../../core/clock.ts';
import type { Logger } from '../../core/logger.ts';
import { counter } from '../../core/metrics.ts';
import { findZombies, type ProcFs } from '../procfs/reaper.ts';
import { type Libc, libcLoader } from './libc.ts';

/** waitpid(pid, NULL, WNOHANG): the pid when reaped, 0 when not yet, -1 on error. */
export type WaitPid = (pid: number) => number;

export interface Pid1ReaperOptions {
  readonly clock: Clock;
  readonly registry: Registry;
  readonly logger: Logger;
  readonly fs: ProcFs;
  readonly waitpid: WaitPid;
  readonly procPath?: string;
  readonly intervalMs?: number;
}

/**
 * When the agent is PID 1 (no tini), orphaned plugin descendants are re-parented to it and only it can
 * reap them. Node has no waitpid(-1), and calling it would steal the exit status of children libuv
 * waits for. So the reaper waits only for zombies it has seen in two scans in a row: libuv reaps its
 * own children as soon as SIGCHLD arrives, so a zombie that survives a whole interval is an orphan.
 */
export class Pid1Reaper {
  private readonly opts: Pid1ReaperOptions;
  private readonly reaped;
  private seen = new Set<number>();
  private timer: TimerHandle | undefined;

  constructor(opts: Pid1ReaperOptions) {
    this.opts = opts;
    this.reaped = counter(opts.registry, {
      name: 'npd_zombies_reaped_total',
      help: 'Orphaned zombie processes the agent reaped while running as PID 1.',
    });
  }

  start(): void {
    this.timer = this.opts.clock.setTimeout(() => {
      void this.sweep().finally(() => {
        if (this.timer) this.start();
      });
    }, this.opts.intervalMs ?? 5000);
  }

  stop(): void {
    this.timer?.cancel();
    this.timer = undefined;
  }

  /** One scan: reaps zombies also seen by the previous scan; returns how many were reaped. */
  async sweep(): Promise<number> {
    let zombies: number[];
    try {
      zombies = (await findZombies(this.opts.procPath ?? '/proc', 1, this.opts.fs)).map((z) => z.pid);
    } catch (err) {
      this.opts.logger.debug({ err: (err as Error).message }, 'cannot scan for zombies to reap');
      return 0;
    }
    let count = 0;
    for (const pid of zombies) {
      if (this.seen.has(pid) && this.opts.waitpid(pid) === pid) count++;
    }
    this.seen = new Set(zombies);
    if (count > 0) this.reaped.inc(count);
    return count;
  }
}

/** libc's waitpid (libc.ts), loaded only when the agent really is PID 1. */
export async function libcWaitpid(libc: () => Libc | Error = libcLoader()): Promise<WaitPid | undefined> {
  try {
    const lib = libc();
    if (lib instanceof Error) return undefined;
    const waitpid = lib.func('int waitpid(int pid, void *status, int options)') as (
      pid: number,
      status: null,
      options: number,
    ) => number;
    const WNOHANG = 1;
    return (pid) => waitpid(pid, null, WNOHANG);
  } catch {
    return undefined;
  }
}
