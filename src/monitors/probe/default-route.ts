import { z } from 'zod';
import { errorCode } from '../../core/errors.ts';
import { procFile, readText } from '../../host/procfs/proc.ts';
import { type DefaultRoute, ipv4DefaultRoutes, ipv6DefaultRoutes } from '../../host/procfs/routes.ts';
import { byThreshold, mainRule, type ProbeKind } from './kind.ts';

const options = z
  .strictObject({
    ipv4: z.boolean().default(true),
    /** Dual-stack and IPv6-only clusters need an IPv6 default route too. */
    ipv6: z.boolean().default(false),
  })
  .refine((o) => o.ipv4 || o.ipv6, { message: 'at least one of ipv4 and ipv6 must be true', path: ['ipv4'] });

export type DefaultRouteOptions = z.infer<typeof options>;

function describe(routes: readonly DefaultRoute[]): string {
  return routes.map((r) => (r.gateway ? `via ${r.gateway} dev ${r.iface}` : `dev ${r.iface}`)).join(', ');
}

/**
 * A usable default route (up, not a reject route) in the main routing tables, from
 * /proc/net/route and /proc/net/ipv6_route of the agent's network namespace (hostNetwork).
 */
export const defaultRouteProbe: ProbeKind<DefaultRouteOptions> = {
  kind: 'default-route',
  options,
  defaults: () => ({
    condition: 'NoDefaultRoute',
    reason: 'DefaultRouteMissing',
    healthyReason: 'DefaultRoutePresent',
    healthyMessage: 'the node has a default route',
  }),
  create(spec, env) {
    const rule = mainRule(spec);
    const o = spec.options;
    const read = async (file: string, signal: AbortSignal) => {
      try {
        return await readText(procFile(env.paths.proc, 'net', file), signal);
      } catch (err) {
        // No ipv6_route: IPv6 is disabled in this kernel or namespace, so there is no IPv6 route.
        if (errorCode(err) === 'ENOENT' && file === 'ipv6_route') return '';
        throw err;
      }
    };
    return {
      rules: [rule],
      async check(ctx) {
        const found: string[] = [];
        const missing: string[] = [];
        if (o.ipv4) {
          const r = ipv4DefaultRoutes(await read('route', ctx.signal));
          (r.length > 0 ? found : missing).push(r.length > 0 ? `IPv4 ${describe(r)}` : 'IPv4');
        }
        if (o.ipv6) {
          const r = ipv6DefaultRoutes(await read('ipv6_route', ctx.signal));
          (r.length > 0 ? found : missing).push(r.length > 0 ? `IPv6 ${describe(r)}` : 'IPv6');
        }
        if (missing.length === 0) return [byThreshold(rule, false, `default route: ${found.join('; ')}`)];
        const message = `no ${missing.join(' or ')} default route: traffic to anything off the node's subnets has nowhere to go; check DHCP or the network configuration (\`ip route\`, \`ip -6 route\`)`;
        return [byThreshold(rule, true, message)];
      },
    };
  },
};
