import { request } from 'node:http';
import { z } from 'zod';
import { goDuration } from '../../config/schema-kit.ts';
import { errorCode, errorMessage } from '../../core/errors.ts';
import { formatGoDuration } from '../../gocompat/duration.ts';
import { deadline } from '../../host/process/timeout.ts';
import { mainRule, nonOk, ok, type ProbeKind } from './kind.ts';

const options = z.strictObject({
  /** kubelet --healthz-bind-address; reaching 127.0.0.1 needs hostNetwork. */
  host: z.string().min(1).default('127.0.0.1'),
  /** kubelet --healthz-port. */
  port: z.number().int().min(1).max(65535).default(10248),
  path: z.string().startsWith('/').default('/healthz'),
  /** A kubelet that takes longer than this is hung, which is a problem, not a probe error. */
  requestTimeout: goDuration.default(3000),
});

export type KubeletOptions = z.infer<typeof options>;

const MAX_BODY = 512;

interface Answer {
  readonly status: number;
  readonly body: string;
}

/** kubelet liveness from its unauthenticated healthz endpoint, like NPD's health-checker. */
export const kubeletProbe: ProbeKind<KubeletOptions> = {
  kind: 'kubelet',
  options,
  defaults: () => ({
    condition: 'KubeletUnhealthy',
    reason: 'KubeletUnhealthy',
    healthyReason: 'KubeletIsHealthy',
    healthyMessage: 'kubelet on the node is functioning properly',
  }),
  create(spec, env) {
    const rule = mainRule(spec);
    const o = spec.options;
    const where = `http://${o.host.includes(':') ? `[${o.host}]` : o.host}:${o.port}${o.path}`;
    return {
      rules: [rule],
      async check(ctx) {
        const d = deadline(env.clock, o.requestTimeout, ctx.signal);
        try {
          const answer = await get(o, d.signal);
          const body = answer.body.trim().replace(/\s+/g, ' ');
          if (answer.status === 200) return [ok(rule, `kubelet ${where}: ${body || 'ok'}`)];
          return [nonOk(rule, `kubelet ${where} returned ${answer.status}: ${body}`)];
        } catch (err) {
          if (d.expired())
            return [
              nonOk(rule, `kubelet ${where} did not answer within ${formatGoDuration(o.requestTimeout)}`),
            ];
          ctx.signal.throwIfAborted();
          if (errorCode(err) === 'ECONNREFUSED') return [nonOk(rule, `kubelet is not listening on ${where}`)];
          return [nonOk(rule, `kubelet ${where}: ${errorMessage(err)}`)];
        } finally {
          d.cancel();
        }
      },
    };
  },
};

function get(o: KubeletOptions, signal: AbortSignal): Promise<Answer> {
  return new Promise((resolve, reject) => {
    const req = request(
      { host: o.host, port: o.port, path: o.path, method: 'GET', signal, agent: false },
      (res) => {
        let body = '';
        res.setEncoding('utf8');
        res.on('data', (chunk: string) => {
          if (body.length < MAX_BODY) body += chunk.slice(0, MAX_BODY - body.length);
        });
        res.on('end', () => resolve({ status: res.statusCode ?? 0, body }));
        res.on('error', reject);
      },
    );
    req.on('error', reject);
    req.end();
  });
}
