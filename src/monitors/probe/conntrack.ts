import { z } from 'zod';
import { errorCode } from '../../core/errors.ts';
import { percentOf, procFile, readBigInt, usage } from '../../host/procfs/proc.ts';
import { byThreshold, mainRule, ok, type ProbeKind } from './kind.ts';

const options = z.strictObject({
  /** Tracked connections as a percentage of nf_conntrack_max (NPD's network_problem.sh uses 90). */
  percent: z.number().min(0).max(100).default(90),
});

export type ConntrackOptions = z.infer<typeof options>;

/**
 * Conntrack table fill. The count is per network namespace of the reader, so the agent needs
 * hostNetwork for it to describe the node.
 */
export const conntrackProbe: ProbeKind<ConntrackOptions> = {
  kind: 'conntrack',
  options,
  defaults: () => ({
    condition: 'ConntrackEntriesLow',
    reason: 'ConntrackTableNearFull',
    healthyReason: 'ConntrackTableAvailable',
    healthyMessage: 'the conntrack table has room',
  }),
  create(spec, env) {
    const rule = mainRule(spec);
    const dir = procFile(env.paths.proc, 'sys', 'net', 'netfilter');
    return {
      rules: [rule],
      async check(ctx) {
        let count: bigint;
        let max: bigint;
        try {
          count = await readBigInt(`${dir}/nf_conntrack_count`, ctx.signal);
          max = await readBigInt(`${dir}/nf_conntrack_max`, ctx.signal);
        } catch (err) {
          // Without the nf_conntrack module nothing is tracked, so nothing can fill up.
          if (errorCode(err) === 'ENOENT') return [ok(rule, 'nf_conntrack is not loaded')];
          throw err;
        }
        const pct = percentOf(count, max);
        return [
          byThreshold(rule, pct >= spec.options.percent, `conntrack entries: ${usage(count, max, pct)}`),
        ];
      },
    };
  },
};
