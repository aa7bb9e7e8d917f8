import { join } from 'node:path';
import { z } from 'zod';
import { goDuration } from '../../config/schema-kit.ts';
import { errorMessage } from '../../core/errors.ts';
import { formatGoDuration } from '../../gocompat/duration.ts';
import {
  decodeStatusResponse,
  decodeVersionResponse,
  encodeStatusRequest,
  encodeVersionRequest,
  RUNTIME_SERVICE,
  type RuntimeCondition,
} from '../../host/protocols/grpc/cri-proto.ts';
import { GrpcUnixClient } from '../../host/protocols/grpc/unary.ts';
import { deadline } from '../../host/process/timeout.ts';
import { byThreshold, mainRule, nonOk, type ProbeKind } from './kind.ts';

const options = z.strictObject({
  /** The CRI socket below --host-root; CRI-O's is /var/run/crio/crio.sock. */
  socket: z.string().startsWith('/').default('/run/containerd/containerd.sock'),
  /** A runtime slower than this is hung, which is a problem, not a probe error (crictl's default is 2s). */
  requestTimeout: goDuration.default(3000),
  /** NetworkReady is false until a CNI is installed; turn this off if that should not count. */
  requireNetworkReady: z.boolean().default(true),
});

export type ContainerdOptions = z.infer<typeof options>;

/**
 * Container runtime health over CRI gRPC, what kubelet itself asks: Version (is it answering) and
 * Status (RuntimeReady, NetworkReady). No crictl binary involved.
 */
export const containerdProbe: ProbeKind<ContainerdOptions> = {
  kind: 'containerd',
  options,
  defaults: () => ({
    condition: 'ContainerRuntimeUnhealthy',
    reason: 'ContainerdUnhealthy',
    healthyReason: 'ContainerRuntimeIsHealthy',
    healthyMessage: 'Container runtime on the node is functioning properly',
  }),
  create(spec, env) {
    const rule = mainRule(spec);
    const o = spec.options;
    const socket = join(env.paths.root, o.socket);
    return {
      rules: [rule],
      async check(ctx) {
        const d = deadline(env.clock, o.requestTimeout, ctx.signal);
        const client = new GrpcUnixClient(socket, d.signal);
        try {
          const v = decodeVersionResponse(
            await client.call(`${RUNTIME_SERVICE}/Version`, encodeVersionRequest()),
          );
          const conditions = decodeStatusResponse(
            await client.call(`${RUNTIME_SERVICE}/Status`, encodeStatusRequest()),
          );
          const problems = notReady(conditions, o.requireNetworkReady);
          const name = `${v.runtimeName || 'runtime'} ${v.runtimeVersion}`.trim();
          const detail = problems.length > 0 ? problems.join(', ') : conditions.map((c) => c.type).join(', ');
          return [byThreshold(rule, problems.length > 0, `${name}: ${detail}`)];
        } catch (err) {
          if (d.expired())
            return [nonOk(rule, `${o.socket} did not answer within ${formatGoDuration(o.requestTimeout)}`)];
          ctx.signal.throwIfAborted();
          return [nonOk(rule, `${o.socket}: ${errorMessage(err)}`)];
        } finally {
          d.cancel();
          client.close();
        }
      },
    };
  },
};

/** Like kubelet: a missing RuntimeReady or NetworkReady condition counts as not ready. */
function notReady(conditions: readonly RuntimeCondition[], requireNetwork: boolean): string[] {
  const wanted = requireNetwork ? ['RuntimeReady', 'NetworkReady'] : ['RuntimeReady'];
  const out: string[] = [];
  for (const type of wanted) {
    const c = conditions.find((x) => x.type === type);
    if (!c) out.push(`${type} missing`);
    else if (!c.status)
      out.push(`${type}=false${c.reason ? ` ${c.reason}` : ''}${c.message ? `: ${c.message}` : ''}`);
  }
  return out;
}
