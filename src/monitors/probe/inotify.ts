import { z } from 'zod';
import { countInotify } from '../../host/procfs/inotify-usage.ts';
import { percentOf, procFile, readBigInt } from '../../host/procfs/proc.ts';
import { byThreshold, mainRule, type ProbeKind } from './kind.ts';

const options = z.strictObject({
  /** Walk /proc/<pid>/fd to count instances and watches per user (a readlink per open fd). */
  countUsage: z.boolean().default(false),
  /** Per-user usage as a percentage of the limits; needs countUsage. */
  percent: z.number().min(0).max(100).default(90),
  /** Limits below these are problems by themselves (128 instances is a common, too small default). */
  minMaxUserInstances: z.number().int().positive().optional(),
  minMaxUserWatches: z.number().int().positive().optional(),
});

export type InotifyOptions = z.infer<typeof options>;

/** "too many open files" from inotify: fs.inotify.max_user_instances / max_user_watches. */
export const inotifyProbe: ProbeKind<InotifyOptions> = {
  kind: 'inotify',
  options,
  defaults: () => ({
    condition: 'InotifyLimitsLow',
    reason: 'InotifyNearLimit',
    healthyReason: 'InotifyAvailable',
    healthyMessage: 'inotify instances and watches are below the limits',
  }),
  create(spec, env) {
    const rule = mainRule(spec);
    const o = spec.options;
    const dir = procFile(env.paths.proc, 'sys', 'fs', 'inotify');
    return {
      rules: [rule],
      async check(ctx) {
        const maxInstances = await readBigInt(`${dir}/max_user_instances`, ctx.signal);
        const maxWatches = await readBigInt(`${dir}/max_user_watches`, ctx.signal);
        const problems: string[] = [];
        if (o.minMaxUserInstances !== undefined && maxInstances < BigInt(o.minMaxUserInstances)) {
          problems.push(`max_user_instances ${maxInstances} < ${o.minMaxUserInstances}`);
        }
        if (o.minMaxUserWatches !== undefined && maxWatches < BigInt(o.minMaxUserWatches)) {
          problems.push(`max_user_watches ${maxWatches} < ${o.minMaxUserWatches}`);
        }
        let used = '';
        if (o.countUsage) {
          const usage = await countInotify(env.paths.proc, ctx.signal);
          used = `; ${describeUsage(usage.byUid, maxInstances, maxWatches, o.percent, problems)}`;
        }
        const limits = `max_user_instances=${maxInstances} max_user_watches=${maxWatches}`;
        const message = problems.length > 0 ? `inotify: ${problems.join(', ')}` : `inotify: ${limits}${used}`;
        return [byThreshold(rule, problems.length > 0, message)];
      },
    };
  },
};

/** Adds a problem per user over the threshold and returns a summary of the busiest user. */
function describeUsage(
  byUid: ReadonlyMap<number, { instances: number; watches: number }>,
  maxInstances: bigint,
  maxWatches: bigint,
  percent: number,
  problems: string[],
): string {
  let top = { uid: -1, instances: 0, watches: 0 };
  for (const [uid, u] of byUid) {
    const pi = percentOf(BigInt(u.instances), maxInstances);
    const pw = percentOf(BigInt(u.watches), maxWatches);
    if (pi >= percent) problems.push(`uid ${uid} uses ${u.instances} of ${maxInstances} instances (${pi}%)`);
    if (pw >= percent) problems.push(`uid ${uid} uses ${u.watches} of ${maxWatches} watches (${pw}%)`);
    if (u.instances > top.instances) top = { uid, ...u };
  }
  return top.uid < 0
    ? 'no inotify instances'
    : `busiest uid ${top.uid}: ${top.instances} instances, ${top.watches} watches`;
}
