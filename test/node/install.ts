/**
 * Proofs 1, 2 and 7 of the node suite for one installed pod: Running and Ready through the kubelet's
 * probes with start-up lines in `kubectl logs`, a marked kernel line as condition and event on the
 * kubelet-registered Node across kubelet status updates, and the projected ServiceAccount token as the
 * agent's identity.
 */
import assert from 'node:assert/strict';
import { kmsg, marker } from '../e2e/support.ts';
import { waitFor } from '../support/agent-process.ts';
import type { NodeCluster } from './harness/node-cluster.ts';
import {
  type AgentPod,
  agentLogs,
  describeNode,
  NS,
  nodeConditions,
  nodeEvents,
  splitImageRef,
} from './support.ts';

export const SA_USER = 'system:serviceaccount:kube-system:node-problem-detector';

export function oomLine(m: string, pid = 4242): string {
  // mm/oom_kill.c __oom_kill_process()
  return `Out of memory: Killed process ${pid} (${m}) total-vm:10240kB, anon-rss:5120kB, file-rss:0kB, shmem-rss:0kB, UID:0 pgtables:40kB oom_score_adj:0`;
}

export function xfsLine(m: string): string {
  // fs/xfs/xfs_fsops.c xfs_do_force_shutdown()
  return `XFS (${m}): Corruption of in-memory data (0x8) detected at xfs_trans_cancel+0x1a/0x70 (fs/xfs/xfs_trans.c:1097).  Shutting down filesystem.`;
}

export async function checkStartedByKubelet(node: NodeCluster, pod: AgentPod): Promise<void> {
  assert.equal(pod.restartCount, 0);
  const spec = JSON.parse(await node.kubectl(['-n', NS, 'get', 'pod', pod.name, '-o', 'json'])).spec;
  assert.equal(spec.nodeName, node.nodeName, 'bound to the node the kubelet registered');
  assert.equal(spec.containers[0].livenessProbe.httpGet.path, '/healthz');
  assert.equal(spec.containers[0].readinessProbe.httpGet.path, '/readyz');
  const logs = await agentLogs(node, pod.name);
  assert.match(logs, /reporting to the API server/);
  assert.match(logs, /in-cluster/);
  assert.match(logs, /agent started/);
  assert.ok(logs.includes(node.nodeName), 'NODE_NAME from spec.nodeName');
  // What the kubelet's readiness probe asked, asked again from the node.
  const r = await fetch(`http://${pod.podIP}:20256/readyz`);
  assert.equal(r.status, 200, await r.text());
}

/**
 * The kubelet pulled the image from the registry on 127.0.0.1: the running image is the manifest the
 * registry serves for the tag, and the kubelet's Pulled event names the registry reference. Only the
 * first pod on the node pulls; later ones find the image present.
 */
export async function checkPulledFromRegistry(node: NodeCluster, pod: AgentPod): Promise<void> {
  const status = JSON.parse(await node.kubectl(['-n', NS, 'get', 'pod', pod.name, '-o', 'json'])).status;
  const imageID: string = status.containerStatuses[0].imageID;
  const { repo, tag } = splitImageRef(node.agentImage);
  const slash = repo.indexOf('/');
  const r = await fetch(`http://${repo.slice(0, slash)}/v2/${repo.slice(slash + 1)}/manifests/${tag}`, {
    method: 'HEAD',
    headers: {
      accept:
        'application/vnd.oci.image.manifest.v1+json, application/vnd.docker.distribution.manifest.v2+json',
    },
  });
  assert.equal(r.status, 200, `the registry has ${node.agentImage}`);
  assert.equal(imageID, `${repo}@${r.headers.get('docker-content-digest')}`);
  const events = await node.kubectl([
    '-n',
    NS,
    'get',
    'events',
    '--field-selector',
    `involvedObject.name=${pod.name},reason=Pulled`,
    '-o',
    'jsonpath={.items[*].message}',
  ]);
  const pulled = `Successfully pulled image "${node.agentImage}"`;
  assert.ok(events.includes(pulled), `no "${pulled}" in the Pulled events: ${events}`);
}

/** Writes an XFS shutdown and an OOM kill; returns the marker once both show in kubectl. */
export async function nodeView(node: NodeCluster): Promise<string> {
  const m = marker('npdnode');
  kmsg(xfsLine(m), oomLine(m));
  await waitFor(async () => /XfsShutdown\s+True/.test(await describeNode(node)), 90_000);
  await waitFor(async () => (await nodeEvents(node)).includes(m), 90_000);
  assert.match(
    await nodeEvents(node),
    new RegExp(`Warning\\s+OOMKilling\\s+node/${node.nodeName}\\s+.*\\(${m}\\)`, 'i'),
  );
  return m;
}

/** Three kubelet heartbeats (two status updates after the first seen): both owners' conditions stay. */
export async function survivesKubeletUpdates(node: NodeCluster): Promise<void> {
  const beats = new Set<string>();
  await waitFor(async () => {
    const conds = await nodeConditions(node);
    const ready = conds.find((c) => c.type === 'Ready');
    const xfs = conds.find((c) => c.type === 'XfsShutdown');
    assert.equal(xfs?.status, 'True', 'the agent condition survived a kubelet status update');
    if (ready?.status === 'True' && ready.lastHeartbeatTime) beats.add(ready.lastHeartbeatTime);
    return beats.size >= 3;
  }, 120_000);
  const described = await describeNode(node);
  for (const t of [
    'MemoryPressure',
    'DiskPressure',
    'PIDPressure',
    'Ready',
    'KernelDeadlock',
    'XfsShutdown',
  ]) {
    assert.match(described, new RegExp(`^\\s+${t}\\s+(True|False)\\s`, 'm'), `${t} in kubectl describe node`);
  }
}

interface RawAudit {
  user?: { username?: string; extra?: Record<string, string[]> };
  responseStatus?: { code?: number };
  objectRef?: { resource?: string };
  verb?: string;
  requestReceivedTimestamp?: string;
}

/** The agent's API writes since `since`, as the audit log recorded them. */
export function agentAudit(
  node: NodeCluster,
  since: ReturnType<NodeCluster['cp']['auditMark']> | undefined,
): RawAudit[] {
  return (node.cp.auditEvents({}, since) as unknown as RawAudit[]).filter(
    (e) => e.user?.username === SA_USER,
  );
}

/** The bound token's claims, as kube-apiserver saw them on the agent's Event writes. */
export async function checkIdentity(node: NodeCluster, pod: AgentPod): Promise<void> {
  const since = node.cp.auditMark();
  kmsg(oomLine(marker('npdtok'), 4243));
  await waitFor(() => agentAudit(node, since).some((e) => e.objectRef?.resource === 'events'), 60_000);
  const ev = agentAudit(node, since).find((e) => e.objectRef?.resource === 'events');
  const extra = ev?.user?.extra ?? {};
  assert.deepEqual(extra['authentication.kubernetes.io/pod-name'], [pod.name]);
  assert.deepEqual(extra['authentication.kubernetes.io/pod-uid'], [pod.uid]);
  assert.deepEqual(extra['authentication.kubernetes.io/node-name'], [node.nodeName]);
  assert.ok((ev?.responseStatus?.code ?? 500) < 300, `event write answered ${ev?.responseStatus?.code}`);
}
