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

/**
 * The kubelet rotates a projected token at 80 % of its lifetime. Waits until the agent's requests
 * carry a second token id, then checks that every request with it succeeded.
 */
export async function checkRotation(node: NodeCluster, podStart: number): Promise<void> {
  const deadline = podStart + TOKEN_SECONDS * 1000 + 120_000;
  let ids: string[] = [];
  while (Date.now() < deadline) {
    ids = [
      ...new Set(
        agentAudit(node, undefined)
          .filter((e) => Date.parse(e.requestReceivedTimestamp ?? '') >= podStart)
          .map(credential),
      ),
    ];
    if (ids.length >= 2) break;
    await new Promise((r) => setTimeout(r, 10_000));
  }
  assert.ok(ids.length >= 2, `one token id over ${TOKEN_SECONDS} s: ${ids.join(', ')}`);
  const latest = ids[ids.length - 1];
  const withLatest = agentAudit(node, undefined).filter((e) => credential(e) === latest);
  assert.ok(withLatest.length > 0);
  for (const e of withLatest) assert.ok((e.responseStatus?.code ?? 0) < 400, JSON.stringify(e));
}
