/**
 * The fleet's identities on a real control plane, as the DaemonSet really has them: one Node per
 * identity (a kubelet would register it), the agent's ServiceAccount kube-system/node-problem-detector
 * bound to the shipped ClusterRole, the node-binding admission policy of deploy/base, and per node a Pod
 * bound to it whose TokenRequest token carries the node's name (the claim the kubelet's projected token
 * carries), so every agent may write about its own node only. Made in bulk, a few dozen requests at a time.
 */
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { type ControlPlane, REPO_ROOT, type StaticUser } from '../e2e/harness/controlplane.ts';
import { mapLimit, pollUntil } from './util.ts';

export const FLEET_NS = 'kube-system';
export const FLEET_SA = 'node-problem-detector';
/** The user every agent's requests carry in the audit log (one ServiceAccount for all pods). */
export const FLEET_SA_USER = `system:serviceaccount:${FLEET_NS}:${FLEET_SA}`;
/** The audit log's user.extra key naming the node the token is bound to. */
export const NODE_NAME_EXTRA = 'authentication.kubernetes.io/node-name';
export const FLEET_LABEL = 'npd-fleet';
/** A static user whose requests keep a throttled priority level busy (throttle.ts). */
export const HOLD_USER = 'npd-fleet-hold';
const POLICY = join(REPO_ROOT, 'deploy/base/node-binding-policy.yaml');
const IN_FLIGHT = 24;

export interface FleetIdentity {
  readonly name: string;
  /** A kubeconfig with the node-bound ServiceAccount token. */
  readonly kubeconfig: string;
  readonly token: string;
}

export function fleetNodeName(i: number): string {
  return `npd-fleet-${String(i).padStart(5, '0')}`;
}

/** The kubelet-like neighbours (system:node:<name>, group system:nodes) and the hold user, known at start. */
export function fleetStaticUsers(nodes: number): StaticUser[] {
  const users: StaticUser[] = Array.from({ length: nodes }, (_, i) => ({
    name: `system:node:${fleetNodeName(i)}`,
    groups: ['system:nodes'],
  }));
  return [...users, { name: HOLD_USER }];
}

/** The token of a static user known at start (no apiserver restart: writeKubeconfig only writes the file). */
export async function staticToken(cp: ControlPlane, user: string, clusterRole?: string): Promise<string> {
  const file = await cp.writeKubeconfig(user, clusterRole ? { clusterRole } : {});
  const config = JSON.parse(readFileSync(file, 'utf8')) as { users: { user: { token: string } }[] };
  return config.users[0]?.user.token ?? '';
}

async function must(cp: ControlPlane, method: string, path: string, body: unknown): Promise<unknown> {
  const r = await cp.request(method, path, { body });
  if (![200, 201].includes(r.status)) throw new Error(`${method} ${path}: ${r.status} ${r.text}`);
  return r.json;
}

async function serviceAccount(cp: ControlPlane): Promise<void> {
  await cp.kubectl(['apply', '-f', POLICY]);
  await must(cp, 'POST', `/api/v1/namespaces/${FLEET_NS}/serviceaccounts`, { metadata: { name: FLEET_SA } });
  await must(cp, 'POST', '/apis/rbac.authorization.k8s.io/v1/clusterrolebindings', {
    metadata: { name: 'npd-fleet-agent' },
    roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'ClusterRole', name: cp.clusterRoleName },
    subjects: [{ kind: 'ServiceAccount', name: FLEET_SA, namespace: FLEET_NS }],
  });
}

/** The Node, the Pod bound to it and the Pod's token: what the DaemonSet's pod on that node holds. */
async function identity(cp: ControlPlane, dir: string, name: string): Promise<FleetIdentity> {
  await must(cp, 'POST', '/api/v1/nodes', {
    apiVersion: 'v1',
    kind: 'Node',
    metadata: { name, labels: { [FLEET_LABEL]: 'true', 'kubernetes.io/hostname': name } },
  });
  const pod = (await must(cp, 'POST', `/api/v1/namespaces/${FLEET_NS}/pods`, {
    metadata: { name: `npd-${name}`, labels: { [FLEET_LABEL]: 'true' } },
    spec: {
      nodeName: name,
      serviceAccountName: FLEET_SA,
      automountServiceAccountToken: false,
      containers: [{ name: 'agent', image: 'npd:fleet' }],
    },
  })) as { metadata: { name: string; uid: string } };
  const tr = (await must(cp, 'POST', `/api/v1/namespaces/${FLEET_NS}/serviceaccounts/${FLEET_SA}/token`, {
    apiVersion: 'authentication.k8s.io/v1',
    kind: 'TokenRequest',
    spec: {
      audiences: [],
      expirationSeconds: 24 * 3600,
      boundObjectRef: { apiVersion: 'v1', kind: 'Pod', name: pod.metadata.name, uid: pod.metadata.uid },
    },
  })) as { status: { token: string } };
  const token = tr.status.token;
  const kubeconfig = join(dir, `kubeconfig-${name}.json`);
  writeFileSync(kubeconfig, kubeconfigJson(cp, name, token), { mode: 0o600 });
  return { name, kubeconfig, token };
}

function kubeconfigJson(cp: ControlPlane, user: string, token: string): string {
  return JSON.stringify({
    apiVersion: 'v1',
    kind: 'Config',
    clusters: [{ name: 'fleet', cluster: { server: cp.url, 'certificate-authority': cp.caFile } }],
    users: [{ name: user, user: { token } }],
    contexts: [{ name: 'fleet', context: { cluster: 'fleet', user } }],
    'current-context': 'fleet',
  });
}

/** Whether the policy is in force: one node's token may not write another node's status. */
async function policyEnforced(cp: ControlPlane, a: FleetIdentity, b: FleetIdentity): Promise<boolean> {
  // A dry run goes through admission and writes nothing, so no probe condition is left on the Node.
  const r = await cp.request('PATCH', `/api/v1/nodes/${b.name}/status?dryRun=All`, {
    token: a.token,
    body: { status: { conditions: [{ type: 'NpdFleetProbe', status: 'False', reason: 'Probe' }] } },
  });
  return r.status === 403;
}

/** Creates `count` identities; resolves once the API server enforces the node-binding policy. */
export async function createIdentities(
  cp: ControlPlane,
  dir: string,
  count: number,
): Promise<FleetIdentity[]> {
  if (count < 2) throw new Error('the fleet needs at least 2 identities (the policy check uses two)');
  await serviceAccount(cp);
  const names = Array.from({ length: count }, (_, i) => fleetNodeName(i));
  const fleet = await mapLimit(names, IN_FLIGHT, (name) => identity(cp, dir, name));
  const [a, b] = fleet as [FleetIdentity, FleetIdentity];
  if (!(await pollUntil(() => policyEnforced(cp, a, b), 60_000, 250)))
    throw new Error('the node-binding policy was not enforced within 60 s');
  return fleet;
}
