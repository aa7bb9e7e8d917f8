/**
 * The API objects a real cluster would already hold when the agent starts: the agent's ClusterRole
 * and binding (as deployed), and the Node as a kubelet registers it. Nothing else runs that would.
 */
import * as fs from 'node:fs';
import { parse as parseYaml } from 'yaml';
import type { Cluster } from './cluster.ts';

function objName(json: unknown): string | undefined {
  const md = (json as { metadata?: { name?: unknown } } | undefined)?.metadata;
  return typeof md?.name === 'string' ? md.name : undefined;
}

/** The agent's ClusterRole, from the repo's manifest, and a binding of the agent user to it alone. */
export async function installClusterRole(
  cluster: Cluster,
  roleFile: string,
  agentUser: string,
): Promise<string> {
  const role = parseYaml(fs.readFileSync(roleFile, 'utf8')) as unknown;
  const kind = (role as { kind?: unknown } | null)?.kind;
  const clusterRoleName = objName(role) ?? '';
  if (kind !== 'ClusterRole' || !clusterRoleName) throw new Error(`${roleFile}: not a named ClusterRole`);
  await cluster.mustRequest('POST', '/apis/rbac.authorization.k8s.io/v1/clusterroles', role, [201]);
  await cluster.bindClusterRole(agentUser, clusterRoleName);
  return clusterRoleName;
}

/** The Node, as a kubelet would register it; returns its uid. */
export async function registerNode(
  cluster: Cluster,
  nodeName: string,
  nodeLabels: Record<string, string> | undefined,
): Promise<string> {
  const created = await cluster.mustRequest(
    'POST',
    '/api/v1/nodes',
    {
      apiVersion: 'v1',
      kind: 'Node',
      metadata: {
        name: nodeName,
        labels: {
          'kubernetes.io/hostname': nodeName,
          'kubernetes.io/os': 'linux',
          'kubernetes.io/arch': 'amd64',
          ...nodeLabels,
        },
      },
    },
    [201],
  );
  const nodeUid = String((created.json as { metadata?: { uid?: unknown } }).metadata?.uid ?? '');
  if (!nodeUid) throw new Error(`POST /api/v1/nodes returned no uid: ${created.text}`);
  return nodeUid;
}

/** A Ready condition and addresses, as a kubelet would report them (no kubelet runs here). */
export async function markNodeReady(cluster: Cluster, nodeName: string): Promise<void> {
  const now = new Date().toISOString().replace(/\.\d+Z$/, 'Z');
  await cluster.mustRequest(
    'PATCH',
    `/api/v1/nodes/${encodeURIComponent(nodeName)}/status`,
    {
      status: {
        conditions: [
          {
            type: 'Ready',
            status: 'True',
            reason: 'KubeletReady',
            message: 'npd e2e harness: no kubelet runs here',
            lastHeartbeatTime: now,
            lastTransitionTime: now,
          },
        ],
        addresses: [
          { type: 'InternalIP', address: '127.0.0.1' },
          { type: 'Hostname', address: nodeName },
        ],
      },
    },
    [200],
  );
}
