import { join } from 'node:path';
import { z } from 'zod';
import { goDuration } from '../../config/schema-kit.ts';
import { errorCode, errorMessage } from '../../core/errors.ts';
import { formatGoDuration } from '../../gocompat/duration.ts';
import { DEFAULT_NAMESERVER, resolvConfServers, resolveWithServers } from '../../host/protocols/dns.ts';
import { readText } from '../../host/procfs/proc.ts';
import { deadline } from '../../host/process/timeout.ts';
import { mainRule, nonOk, ok, type ProbeKind } from './kind.ts';

const options = z.strictObject({
  /** A name the node's resolver must answer, e.g. the image registry's. */
  hostname: z
    .string()
    .regex(
      /^(?=.{1,253}$)[A-Za-z0-9_]([A-Za-z0-9_-]*[A-Za-z0-9])?(\.[A-Za-z0-9_]([A-Za-z0-9_-]*[A-Za-z0-9])?)*\.?$/,
      'must be a DNS name such as registry.k8s.io',
    ),
  rrtype: z.enum(['A', 'AAAA']).default('A'),
  /** The node's resolver configuration, below --host-root. */
  resolvConf: z.string().startsWith('/', 'must be an absolute path').default('/etc/resolv.conf'),
  requestTimeout: goDuration.default(2000),
});

export type DnsOptions = z.infer<typeof options>;

/**
 * Resolves a name through the name servers of the node's resolv.conf (as kubelet hands them to
 * `dnsPolicy: Default` pods), with node:dns: no /etc/hosts and no search list, so the answer comes
 * from a DNS server. Servers on 127.0.0.x (systemd-resolved) are reached only with hostNetwork.
 */
export const dnsProbe: ProbeKind<DnsOptions> = {
  kind: 'dns',
  options,
  defaults: () => ({
    condition: 'DNSResolutionFailed',
    reason: 'DNSLookupFailed',
    healthyReason: 'DNSResolutionWorks',
    healthyMessage: "the node's resolver answers",
  }),
  defaultName: (o) => `dns:${o.hostname}`,
  create(spec, env) {
    const rule = mainRule(spec);
    const o = spec.options;
    const lookup = env.lookup ?? resolveWithServers;
    const conf = join(env.paths.root, o.resolvConf);
    const limit = formatGoDuration(o.requestTimeout);
    return {
      rules: [rule],
      async check(ctx) {
        const listed = resolvConfServers(await readText(conf, ctx.signal));
        const servers = listed.length > 0 ? listed : [DEFAULT_NAMESERVER];
        const what = `${o.hostname} ${o.rrtype} via ${servers.join(', ')}`;
        const d = deadline(env.clock, o.requestTimeout, ctx.signal);
        try {
          const answers = await lookup(
            { servers, name: o.hostname, rrtype: o.rrtype, timeoutMs: o.requestTimeout },
            d.signal,
          );
          return [ok(rule, `${what}: ${answers.join(', ')}`)];
        } catch (err) {
          ctx.signal.throwIfAborted();
          const fix = `check the name servers in ${o.resolvConf} and that they are reachable from the node`;
          if (d.expired() || errorCode(err) === 'ETIMEOUT')
            return [nonOk(rule, `${what}: no answer within ${limit}; ${fix}`)];
          return [nonOk(rule, `${what}: ${errorCode(err) ?? errorMessage(err)}; ${fix}`)];
        } finally {
          d.cancel();
        }
      },
    };
  },
};
