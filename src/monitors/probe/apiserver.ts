import { isIP } from 'node:net';
import { z } from 'zod';
import { goDuration } from '../../config/schema-kit.ts';
import { errorCode, errorMessage } from '../../core/errors.ts';
import { formatGoDuration } from '../../gocompat/duration.ts';
import { tcpConnect } from '../../host/protocols/tcp.ts';
import { deadline } from '../../host/process/timeout.ts';
import { mainRule, nonOk, ok, type ProbeKind, unknown } from './kind.ts';

const options = z.strictObject({
  /** Default: KUBERNETES_SERVICE_HOST, the kubernetes Service, reached through kube-proxy's rules. */
  host: z.string().min(1).optional(),
  /** Default: KUBERNETES_SERVICE_PORT, else 443. */
  port: z.number().int().min(1).max(65535).optional(),
  requestTimeout: goDuration.default(3000),
});

export type ApiserverOptions = z.infer<typeof options>;

function endpoint(o: ApiserverOptions, environment: Readonly<Record<string, string | undefined>>) {
  const host = o.host ?? environment.KUBERNETES_SERVICE_HOST;
  const envPort = Number(environment.KUBERNETES_SERVICE_PORT);
  const port = o.port ?? (Number.isInteger(envPort) && envPort > 0 && envPort < 65536 ? envPort : 443);
  return host ? { host, port, text: `${isIP(host) === 6 ? `[${host}]` : host}:${port}` } : undefined;
}

/** TCP reachability of the API server endpoint: a connect and close, no TLS, no credentials. */
export const apiserverProbe: ProbeKind<ApiserverOptions> = {
  kind: 'apiserver',
  options,
  defaults: () => ({
    condition: 'APIServerUnreachable',
    reason: 'APIServerUnreachable',
    healthyReason: 'APIServerReachable',
    healthyMessage: 'the API server endpoint accepts TCP connections',
  }),
  create(spec, env) {
    const rule = mainRule(spec);
    const o = spec.options;
    const limit = formatGoDuration(o.requestTimeout);
    return {
      rules: [rule],
      async check(ctx) {
        const at = endpoint(o, env.environment ?? {});
        if (!at)
          return [
            unknown(
              rule,
              'no API server endpoint: set host (and port), or run in a pod where KUBERNETES_SERVICE_HOST is set',
            ),
          ];
        const d = deadline(env.clock, o.requestTimeout, ctx.signal);
        try {
          await tcpConnect(at.host, at.port, d.signal);
          return [ok(rule, `connected to the API server at ${at.text}`)];
        } catch (err) {
          ctx.signal.throwIfAborted();
          const why = d.expired() ? `no answer within ${limit}` : (errorCode(err) ?? errorMessage(err));
          const fix =
            'check the route to the control plane, security groups/firewall, and kube-proxy for the kubernetes Service address';
          return [nonOk(rule, `cannot connect to the API server at ${at.text}: ${why}; ${fix}`)];
        } finally {
          d.cancel();
        }
      },
    };
  },
};
