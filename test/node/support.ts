/**
 * What the node tests do to the cluster of harness/node-cluster.ts: install the agent as the README
 * says (kustomize with only an image override, or helm), find its pod, read the node as kubectl shows it.
 */
import * as fs from 'node:fs';
import * as path from 'node:path';
import { waitFor } from '../support/agent-process.ts';
import type { NodeCluster } from './harness/node-cluster.ts';

export const REPO = path.resolve(import.meta.dirname, '..', '..');
export const NS = 'kube-system';
export const DS = 'node-problem-detector';
export const SELECTOR = 'app.kubernetes.io/name=node-problem-detector';

export interface AgentPod {
  name: string;
  uid: string;
  phase: string;
  ready: boolean;
  restartCount: number;
  podIP: string;
  image: string;
  startedAt: string;
  lastTermination: unknown;
}

/** The image override a user writes: `kustomize edit set image node-problem-detector=<ref>`. */
export function imageOverride(ref: string): { name: string; newName: string; newTag: string } {
  const { repo, tag } = splitImageRef(ref);
  return { name: 'node-problem-detector', newName: repo, newTag: tag };
}

/** `host[:port]/path:tag` split at the tag's colon, the last one: the tag is required. */
export function splitImageRef(ref: string): { repo: string; tag: string } {
  const at = ref.lastIndexOf(':');
  return { repo: ref.slice(0, at), tag: ref.slice(at + 1) };
}

/**
 * A kustomization next to the test's files: deploy/base, the named deploy/components, the image
 * override and, where a test needs one, a JSON patch of the DaemonSet (a user's own overlay).
 */
export function writeOverlay(
  dir: string,
  opts: { image: string; components?: string[]; dsPatch?: unknown[]; configFiles?: string[] },
): string {
  fs.mkdirSync(dir, { recursive: true });
  const rel = (p: string) => path.relative(dir, path.join(REPO, p));
  const k: Record<string, unknown> = {
    apiVersion: 'kustomize.config.k8s.io/v1beta1',
    kind: 'Kustomization',
    resources: [rel('deploy/base')],
    components: (opts.components ?? []).map((c) => rel(`deploy/components/${c}`)),
    images: [imageOverride(opts.image)],
  };
  if (opts.configFiles) {
    k.configMapGenerator = [
      { name: 'node-problem-detector-config', behavior: 'merge', files: opts.configFiles },
    ];
  }
  if (opts.dsPatch) {
    k.patches = [{ target: { kind: 'DaemonSet', name: DS }, patch: JSON.stringify(opts.dsPatch) }];
  }
  fs.writeFileSync(path.join(dir, 'kustomization.yaml'), JSON.stringify(k, null, 2));
  return dir;
}

export async function waitRollout(node: NodeCluster, timeoutS = 240): Promise<void> {
  await node.kubectl(['-n', NS, 'rollout', 'status', `daemonset/${DS}`, `--timeout=${timeoutS}s`]);
}

interface PodJson {
  metadata: { name: string; uid: string; deletionTimestamp?: string };
  spec: { containers: { image: string }[] };
  status: {
    phase: string;
    podIP?: string;
    conditions?: { type: string; status: string }[];
    containerStatuses?: {
      restartCount: number;
      ready: boolean;
      state?: { running?: { startedAt: string } };
      lastState?: { terminated?: unknown };
    }[];
  };
}

export async function agentPods(node: NodeCluster): Promise<AgentPod[]> {
  const out = await node.kubectl(['-n', NS, 'get', 'pods', '-l', SELECTOR, '-o', 'json']);
  const items = (JSON.parse(out) as { items: PodJson[] }).items.filter((p) => !p.metadata.deletionTimestamp);
  return items.map((p) => {
    const cs = p.status.containerStatuses?.[0];
    return {
      name: p.metadata.name,
      uid: p.metadata.uid,
      phase: p.status.phase,
      ready: p.status.conditions?.some((c) => c.type === 'Ready' && c.status === 'True') ?? false,
      restartCount: cs?.restartCount ?? -1,
      podIP: p.status.podIP ?? '',
      image: p.spec.containers[0]?.image ?? '',
      startedAt: cs?.state?.running?.startedAt ?? '',
      lastTermination: cs?.lastState?.terminated,
    };
  });
}

/** The one agent pod, once it is Running and Ready. */
export async function readyAgentPod(node: NodeCluster, timeoutMs = 240_000): Promise<AgentPod> {
  let pod: AgentPod | undefined;
  await waitFor(
    async () => {
      const pods = await agentPods(node);
      pod = pods.length === 1 && pods[0]?.phase === 'Running' && pods[0].ready ? pods[0] : undefined;
      return pod !== undefined;
    },
    timeoutMs,
    () => `agent pod not Ready: ${JSON.stringify(pod)}`,
  );
  return pod as AgentPod;
}

export const describeNode = (node: NodeCluster) => node.kubectl(['describe', 'node', node.nodeName]);

export const nodeEvents = (node: NodeCluster) =>
  node.kubectl(['events', '-n', 'default', '--for', `node/${node.nodeName}`]);

export async function agentLogs(node: NodeCluster, pod: string): Promise<string> {
  return node.kubectl(['-n', NS, 'logs', pod]);
}

interface NodeCondition {
  type: string;
  status: string;
  reason?: string;
  message?: string;
  lastHeartbeatTime?: string;
  lastTransitionTime?: string;
}

export async function nodeConditions(node: NodeCluster): Promise<NodeCondition[]> {
  const out = await node.kubectl(['get', 'node', node.nodeName, '-o', 'json']);
  return (JSON.parse(out) as { status: { conditions: NodeCondition[] } }).status.conditions;
}

export async function conditionOf(node: NodeCluster, type: string): Promise<NodeCondition | undefined> {
  return (await nodeConditions(node)).find((c) => c.type === type);
}
