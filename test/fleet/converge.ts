/**
 * Whether every node's condition on the API server is what its agent holds: the admin lists the fleet's
 * Nodes (one LIST, not a GET per node) until each shows the condition, timing how long that took.
 */
import type { ControlPlane } from '../e2e/harness/controlplane.ts';
import { FLEET_LABEL } from './identities.ts';
import { sleep } from './util.ts';

interface NodeList {
  items: {
    metadata: { name: string };
    status?: { conditions?: { type: string; status: string; reason?: string }[] };
  }[];
}

/** Names of `names` whose condition `type` is not `status` with `reason` on the API server now. */
export async function wrongNodes(
  cp: ControlPlane,
  names: readonly string[],
  want: { type: string; status: string; reason: string },
): Promise<string[]> {
  const r = await cp.request('GET', `/api/v1/nodes?labelSelector=${FLEET_LABEL}%3Dtrue`, {
    timeoutMs: 60_000,
  });
  if (r.status !== 200) return [...names];
  const right = new Set<string>();
  for (const n of (r.json as NodeList).items) {
    const c = n.status?.conditions?.find((x) => x.type === want.type);
    if (c?.status === want.status && c.reason === want.reason) right.add(n.metadata.name);
  }
  return names.filter((n) => !right.has(n));
}

export interface Convergence {
  /** Seconds from `t0` until every node was right, or NaN when some never were. */
  readonly seconds: number;
  /** Nodes still wrong at the deadline. */
  readonly wrong: string[];
}

export async function converge(
  cp: ControlPlane,
  names: readonly string[],
  want: { type: string; status: string; reason: string },
  t0: number,
  timeoutMs: number,
): Promise<Convergence> {
  for (;;) {
    let wrong: string[];
    try {
      wrong = await wrongNodes(cp, names, want);
    } catch {
      wrong = [...names];
    }
    if (wrong.length === 0) return { seconds: (Date.now() - t0) / 1000, wrong };
    if (Date.now() - t0 >= timeoutMs) return { seconds: Number.NaN, wrong };
    await sleep(1000);
  }
}
