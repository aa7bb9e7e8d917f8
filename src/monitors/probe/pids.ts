import { z } from 'zod';
import { parseBigInt, percentOf, procFile, readBigInt, readText, usage } from '../../host/proc.ts';
import { byThreshold, mainRule, type ProbeKind, unknown } from './kind.ts';

const options = z.strictObject({
  /** Tasks as a percentage of kernel.pid_max or kernel.threads-max, whichever is closer. */
  percent: z.number().min(0).max(100).default(85),
});

export type PidsOptions = z.infer<typeof options>;

/**
 * PID exhaustion. Every thread takes a PID, so the task count from /proc/loadavg ("running/total",
 * system-wide whatever the pid namespace) is compared with both pid_max and threads-max. Reading it
 * costs one small file instead of a walk over /proc.
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
