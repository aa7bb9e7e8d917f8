import { join } from 'node:path';
import { z } from 'zod';
import { errorCode } from '../../core/errors.ts';
import { readText } from '../../host/procfs/proc.ts';
import { byThreshold, mainRule, type ProbeKind } from './kind.ts';

/** sysctl(8) names: dot-separated, or slash-separated when a component (a VLAN device) has a dot. */
const NAME = /^[A-Za-z0-9_-]+([./][A-Za-z0-9_.-]+)*$/;

function badName(name: string): string | undefined {
  if (!NAME.test(name)) return 'must be a sysctl name such as net.ipv4.ip_forward';
  // Covers "..", so a name cannot leave /proc/sys.
  if (name.split(/[./]/).includes('')) return 'must not have empty components (".." or "//")';
  return undefined;
}

const options = z.strictObject({
  /** Expected values; whitespace inside a value is normalised (ip_local_port_range "32768 60999"). */
  values: z
    .record(z.string(), z.union([z.string().min(1), z.number().int()]))
    .superRefine((v, ctx) => {
      if (Object.keys(v).length === 0)
        ctx.addIssue({ code: 'custom', message: 'must name at least one sysctl' });
      for (const name of Object.keys(v)) {
        const message = badName(name);
        if (message) ctx.addIssue({ code: 'custom', path: [name], message });
      }
    })
    .default({ 'net.ipv4.ip_forward': 1 }),
});

export type SysctlOptions = z.infer<typeof options>;

export function sysctlPath(proc: string, name: string): string {
  const parts = name.includes('/') ? name.split('/') : name.split('.');
  return join(proc, 'sys', ...parts);
}

const norm = (v: string | number) => String(v).trim().split(/\s+/).join(' ');

/**
 * Kernel parameters that Kubernetes networking depends on (ip_forward for pod traffic,
 * bridge-nf-call-iptables for kube-proxy with bridged CNIs, rp_filter, ...), from /proc/sys. The
 * net.* ones are per network namespace: the agent needs hostNetwork.
 */
export const sysctlProbe: ProbeKind<SysctlOptions> = {
  kind: 'sysctl',
  options,
  defaults: () => ({
    condition: 'NetworkSysctlMisconfigured',
    reason: 'SysctlMismatch',
    healthyReason: 'SysctlsAsExpected',
    healthyMessage: 'networking sysctls hold their expected values',
  }),
  create(spec, env) {
    const rule = mainRule(spec);
    const entries = Object.entries(spec.options.values);
    return {
      rules: [rule],
      async check(ctx) {
        const good: string[] = [];
        const bad: string[] = [];
        for (const [name, want] of entries) {
          let have: string;
          try {
            have = norm(await readText(sysctlPath(env.paths.proc, name), ctx.signal));
          } catch (err) {
            if (errorCode(err) !== 'ENOENT') throw err;
            bad.push(
              `${name} does not exist (is the kernel module that provides it, e.g. br_netfilter, loaded?)`,
            );
            continue;
          }
          if (have === norm(want)) good.push(`${name}=${have}`);
          else
            bad.push(
              `${name} is ${have}, expected ${norm(want)} (sysctl -w ${name}=${norm(want)}, and persist it in /etc/sysctl.d/)`,
            );
        }
        return [byThreshold(rule, bad.length > 0, bad.length > 0 ? bad.join('; ') : good.join(', '))];
      },
    };
  },
};
