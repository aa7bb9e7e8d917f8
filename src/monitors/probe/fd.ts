import { z } from 'zod';
import { percentOf, procFile, readBigInts, UNLIMITED, usage } from '../../host/procfs/proc.ts';
import { byThreshold, mainRule, type ProbeKind, unknown } from './kind.ts';

const options = z.strictObject({
  /** Allocated handles as a percentage of fs.file-max. */
  percent: z.number().min(0).max(100).default(80),
  /** Absolute ceiling used when fs.file-max is effectively unlimited (systemd sets LONG_MAX). */
  maxAllocated: z.number().int().positive().optional(),
});

export type FdOptions = z.infer<typeof options>;

/** File-handle exhaustion from /proc/sys/fs/file-nr ("allocated unused max"). */
export const fdProbe: ProbeKind<FdOptions> = {
  kind: 'fd',
  options,
  defaults: () => ({
    condition: 'FileHandlesLow',
    reason: 'FileHandlesNearLimit',
    healthyReason: 'FileHandlesAvailable',
    healthyMessage: 'file handles are below the limit',
  }),
  create(spec, env) {
    const rule = mainRule(spec);
    const path = procFile(env.paths.proc, 'sys', 'fs', 'file-nr');
    return {
      rules: [rule],
      async check(ctx) {
        const [allocated, , max] = await readBigInts(path, ctx.signal);
        if (allocated === undefined || max === undefined)
          return [unknown(rule, `${path}: expected 3 fields`)];
        if (max >= UNLIMITED) {
          const ceiling = spec.options.maxAllocated;
          const over = ceiling !== undefined && allocated >= BigInt(ceiling);
          const limit = ceiling === undefined ? 'no ceiling configured' : `ceiling ${ceiling}`;
          return [
            byThreshold(rule, over, `file handles: ${allocated} allocated, file-max unlimited, ${limit}`),
          ];
        }
        const pct = percentOf(allocated, max);
        return [
          byThreshold(rule, pct >= spec.options.percent, `file handles: ${usage(allocated, max, pct)}`),
        ];
      },
    };
  },
};
