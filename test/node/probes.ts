/**
 * Proofs 3 and 4: the node-probes component against the real containerd and kubelet, subsystem
 * conditions, and --taint-on-condition acted on by the real scheduler and taint manager. Stopping
 * containerd is what makes ContainerRuntimeUnhealthy True, so the taint checks run while it is down.
 */
import assert from 'node:assert/strict';
import { SUBSYSTEM_DEFAULTS } from '../../src/conditions/subsystem.ts';
import { parseGoDuration } from '../../src/gocompat/duration.ts';
import { waitFor } from '../support/agent-process.ts';
import { PAUSE_IMAGE } from './harness/containerd.ts';
import type { NodeCluster } from './harness/node-cluster.ts';
import { conditionOf } from './support.ts';

export const TAINT_KEY = 'npd.test/runtime';
/** What the phase's overlay adds to deploy/base + components node-probes and taint. */
export const PROBE_ARGS = [
  '--subsystem-conditions',
  `--taint-on-condition=ContainerRuntimeUnhealthy=${TAINT_KEY}:NoSchedule,ContainerRuntimeUnhealthy=${TAINT_KEY}:NoExecute`,
];
/** docs/probes.md: interval 10 s (+3 s splay), failureThreshold 2, requestTimeout 3 s, then a patch. */
export const PROBE_DEADLINE_MS = 90_000;
/** A *Ready subsystem condition turns True again only after --subsystem-hold (default 2m) without a problem. */
export const SUBSYSTEM_RECOVERY_MS = PROBE_DEADLINE_MS + Number(parseGoDuration(SUBSYSTEM_DEFAULTS.hold));

export async function waitCondition(
  node: NodeCluster,
  type: string,
  status: string,
  reason?: RegExp,
  timeoutMs = PROBE_DEADLINE_MS,
): Promise<void> {
  let last: unknown;
  await waitFor(
    async () => {
      const c = await conditionOf(node, type);
      last = c;
      return c?.status === status && (reason === undefined || reason.test(c.reason ?? ''));
    },
    timeoutMs,
    () => `${type} is not ${status}: ${JSON.stringify(last)}`,
  );
}

export async function bothProbesHealthy(node: NodeCluster): Promise<void> {
  await waitCondition(node, 'ContainerRuntimeUnhealthy', 'False', /ContainerRuntimeIsHealthy/);
  await waitCondition(node, 'KubeletUnhealthy', 'False', /KubeletIsHealthy/);
  await waitCondition(node, 'ContainerRuntimeReady', 'True', undefined, SUBSYSTEM_RECOVERY_MS);
}

/**
 * A pod with no toleration of ours (the not-ready/unreachable ones only, so only our taint decides),
 * or, with `tolerateOurs`, one that tolerates our taint too: the control that shows it is our taint.
 */
export function testPod(name: string, tolerateOurs = false): string {
  const ours = tolerateOurs ? [{ key: TAINT_KEY, operator: 'Exists' }] : [];
  return JSON.stringify({
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: { name, namespace: 'default' },
    spec: {
      terminationGracePeriodSeconds: 1,
      tolerations: [
        { key: 'node.kubernetes.io/not-ready', operator: 'Exists' },
        { key: 'node.kubernetes.io/unreachable', operator: 'Exists' },
        ...ours,
      ],
      containers: [{ name: 'wait', image: PAUSE_IMAGE, imagePullPolicy: 'IfNotPresent' }],
    },
  });
}

export async function podPhase(
  node: NodeCluster,
  name: string,
): Promise<{ phase: string; deleting: boolean } | undefined> {
  const r = await node.kubectlResult(['-n', 'default', 'get', 'pod', name, '-o', 'json']);
  if (r.code !== 0) return undefined;
  const p = JSON.parse(r.stdout) as { status: { phase: string }; metadata: { deletionTimestamp?: string } };
  return { phase: p.status.phase, deleting: p.metadata.deletionTimestamp !== undefined };
}

async function nodeOf(node: NodeCluster, pod: string): Promise<string> {
  return node.kubectl(['-n', 'default', 'get', 'pod', pod, '-o', 'jsonpath={.spec.nodeName}']);
}

export async function nodeTaints(node: NodeCluster): Promise<string[]> {
  const out = await node.kubectl(['get', 'node', node.nodeName, '-o', 'json']);
  const taints = (JSON.parse(out).spec.taints ?? []) as { key: string; effect: string }[];
  return taints.map((t) => `${t.key}:${t.effect}`);
}

export async function podEvents(node: NodeCluster, name: string): Promise<string> {
  return node.kubectl(['events', '-n', 'default', '--for', `pod/${name}`]);
}

/** While the runtime condition is True: our taints, a Pending pod that says why, an evicted pod. */
export async function taintsAct(node: NodeCluster, victim: string, pending: string): Promise<void> {
  await waitFor(async () => {
    const t = await nodeTaints(node);
    return t.includes(`${TAINT_KEY}:NoSchedule`) && t.includes(`${TAINT_KEY}:NoExecute`);
  }, 60_000);
  await node.kubectl(['apply', '-f', '-'], testPod(pending));
  // kube-scheduler 1.34 says "1 node(s) had untolerated taint(s)" without naming it; the control pod,
  // which tolerates only our taint in addition, is scheduled: ours is the one.
  await waitFor(
    async () => /FailedScheduling.*untolerated taint/.test(await podEvents(node, pending)),
    60_000,
  );
  await node.kubectl(['apply', '-f', '-'], testPod('tolerant', true));
  await waitFor(async () => (await nodeOf(node, 'tolerant')) === node.nodeName, 60_000);
  assert.equal((await podPhase(node, pending))?.phase, 'Pending');
  assert.equal(await nodeOf(node, pending), '');
  // The taint manager marks the victim for deletion (its kubelet cannot stop it while containerd is down).
  await waitFor(async () => {
    const p = await podPhase(node, victim);
    return p === undefined || p.deleting;
  }, 60_000);
  const evictions = await node.kubectl([
    'get',
    'events',
    '-n',
    'default',
    '-o',
    'name',
    '--field-selector',
    `involvedObject.name=${victim},reason=TaintManagerEviction`,
  ]);
  assert.notEqual(evictions.trim(), '', 'the taint manager recorded the eviction');
}

export async function taintsGone(node: NodeCluster, pending: string): Promise<void> {
  await waitFor(async () => !(await nodeTaints(node)).some((t) => t.startsWith(`${TAINT_KEY}:`)), 90_000);
  await waitFor(async () => (await podPhase(node, pending))?.phase === 'Running', 120_000);
}
