import { z } from 'zod';
import { parseBigInt, percentOf, procFile, readBigInt, readText, usage } from '../../host/procfs/proc.ts';
import { byThreshold, mainRule, type ProbeKind, unknown } from './kind.ts';

const options = z.strictObject({
  /** Tasks as a percentage of kernel.pid_max or kernel.threads-max, whichever is closer. */
  percent: z.number().min(0).max(100).default(85),
});

export type PidsOptions = z.infer<typeof options>;

/**
 * PID exhaustion. Every thread takes a PID, so the task count from /proc/loadavg is compared with both
 * pid_max and threads-max. Its "running/total" field is nr_running()/nr_threads (fs/proc/loadavg.c
 * loadavg_proc_show()); nr_threads is the kernel's one global task counter (kernel/fork.c, counted in
 * copy_process(), dropped in kernel/exit.c __unhash_process()), so a pod's own /proc without hostPID
 * reads the node's figure. Only the last field (the last PID) is per pid namespace. Reading it costs one
 * small file instead of a walk over /proc/<pid>, which would see only the pod's processes.
 */
export const pidsProbe: ProbeKind<PidsOptions> = {
  kind: 'pids',
  options,
  defaults: () => ({
    condition: 'ProcessIDsLow',
    reason: 'PIDsNearLimit',
    healthyReason: 'PIDsAvailable',
    healthyMessage: 'processes and threads are below the kernel limits',
  }),
  create(spec, env) {
    const rule = mainRule(spec);
    const proc = env.paths.proc;
    return {
      rules: [rule],
      async check(ctx) {
        const loadavg = procFile(proc, 'loadavg');
        const tasks = parseTasks(await readText(loadavg, ctx.signal), loadavg);
        if (tasks === undefined) return [unknown(rule, `${loadavg}: no running/total field`)];
        const pidMax = await readBigInt(procFile(proc, 'sys', 'kernel', 'pid_max'), ctx.signal);
        const threadsMax = await readBigInt(procFile(proc, 'sys', 'kernel', 'threads-max'), ctx.signal);
        const byPid = percentOf(tasks, pidMax);
        const byThreads = percentOf(tasks, threadsMax);
        const message = `tasks: ${usage(tasks, pidMax, byPid)} of pid_max, ${usage(tasks, threadsMax, byThreads)} of threads-max`;
        return [byThreshold(rule, Math.max(byPid, byThreads) >= spec.options.percent, message)];
      },
    };
  },
};

function parseTasks(text: string, path: string): bigint | undefined {
  const field = text.trim().split(/\s+/)[3];
  const total = field?.split('/')[1];
  return total === undefined ? undefined : parseBigInt(total, path);
}
