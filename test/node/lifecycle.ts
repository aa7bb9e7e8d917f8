/** Proofs 1 (no restart over time) and 7 (token rotation) for the pod of the probes phase. */
import assert from 'node:assert/strict';
import type { NodeCluster } from './harness/node-cluster.ts';
import { agentAudit } from './install.ts';
import { TOKEN_SECONDS } from './overlay.ts';
import { type AgentPod, agentPods } from './support.ts';

/** Until `until`: the same pod, Ready, never restarted. */
export async function watchRestarts(node: NodeCluster, pod: AgentPod, until: number): Promise<void> {
  do {
    const [p] = await agentPods(node);
    assert.equal(p?.uid, pod.uid, 'same pod');
    assert.equal(p?.restartCount, 0, `restarted: ${JSON.stringify(p?.lastTermination)}`);
    await new Promise((r) => setTimeout(r, 10_000));
  } while (Date.now() < until);
}

const credential = (e: { user?: { extra?: Record<string, string[]> } }) =>
  e.user?.extra?.['authentication.kubernetes.io/credential-id']?.[0] ?? '';

/** Each token id the agent used since `since`, with the time of its first request. */
function firstUses(node: NodeCluster, since: number): Map<string, number> {
  const first = new Map<string, number>();
  for (const e of agentAudit(node, undefined)) {
    const at = Date.parse(e.requestReceivedTimestamp ?? '');
    const id = credential(e);
    if (at >= since && id && !first.has(id)) first.set(id, at);
  }
  return first;
}

/**
 * The kubelet rotates a projected token at 80 % of its lifetime (a restarted kubelet fetches a new one
 * at once, so rotation counts from its last start). Waits for a token id first used at least 75 % of
 * the lifetime after that start, then checks that every request with it succeeded.
 */
export async function checkRotation(node: NodeCluster): Promise<void> {
  const from = node.kubelet.startedAt;
  const due = from + TOKEN_SECONDS * 750;
  const deadline = from + TOKEN_SECONDS * 1000 + 120_000;
  let rotated: string | undefined;
  while (rotated === undefined && Date.now() < deadline) {
    rotated = [...firstUses(node, from)].find(([, at]) => at >= due)?.[0];
    if (rotated === undefined) await new Promise((r) => setTimeout(r, 10_000));
  }
  assert.ok(
    rotated,
    `no token rotated within ${TOKEN_SECONDS} s: ${JSON.stringify([...firstUses(node, from)])}`,
  );
  const withRotated = agentAudit(node, undefined).filter((e) => credential(e) === rotated);
  for (const e of withRotated) assert.ok((e.responseStatus?.code ?? 0) < 400, JSON.stringify(e));
}
