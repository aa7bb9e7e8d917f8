/**
 * NPD and this agent reporting to the same real kube-apiserver (the e2e harness) as two Nodes, each
 * with its own user, both connected the way NPD documents:
 * --apiserver-override=<url>?inClusterConfig=false&auth=<kubeconfig>. Their API writes are told apart
 * by user in the apiserver's audit log.
 */
import {
  AGENT_USER,
  type AuditMark,
  type ControlPlane,
  startControlPlane,
} from '../e2e/harness/controlplane.ts';
import type { NpdBuild } from './npd-go.ts';
import { kernelMonitorJson, type Pair, startPair, stopPair } from './vs-npd-pair.ts';

export const NPD_USER = 'npd-go-bench';
const NPD_NODE = 'npd-go-bench-node';
const WRITE_VERBS = ['create', 'update', 'patch', 'delete'];

/** The flags both take to report as `node` with `kubeconfig`, as NPD's DaemonSet passes them. */
function reportingArgs(cp: ControlPlane, config: string, node: string, kubeconfig: string): string[] {
  return [
    `--config.system-log-monitor=${config}`,
    `--hostname-override=${node}`,
    `--apiserver-override=${cp.url}?inClusterConfig=false&auth=${kubeconfig}`,
    '--address=127.0.0.1',
    '--prometheus-address=127.0.0.1',
  ];
}

/** A second Node, as a kubelet registers it, for NPD to patch. */
async function registerNpdNode(cp: ControlPlane): Promise<void> {
  const body = { apiVersion: 'v1', kind: 'Node', metadata: { name: NPD_NODE } };
  const r = await cp.request('POST', '/api/v1/nodes', { body });
  if (r.status !== 201) throw new Error(`POST /api/v1/nodes ${NPD_NODE}: ${r.status} ${r.text}`);
}

/** A fresh control plane and a fresh reporting pair for `body`; both stopped after it. */
export async function withReportingPair<T>(
  build: NpdBuild,
  body: (cp: ControlPlane, pair: Pair) => Promise<T>,
): Promise<T> {
  const cp = await startControlPlane({ users: [{ name: NPD_USER }] });
  let failed = true;
  try {
    const npdKubeconfig = await cp.writeKubeconfig(NPD_USER, { clusterRole: cp.clusterRoleName });
    await registerNpdNode(cp);
    const config = kernelMonitorJson(build);
    const pair = await startPair(build, {
      npd: reportingArgs(cp, config, NPD_NODE, npdKubeconfig),
      ours: reportingArgs(cp, config, cp.nodeName, cp.agentKubeconfig),
    });
    try {
      const out = await body(cp, pair);
      failed = false;
      return out;
    } finally {
      await stopPair(pair);
    }
  } finally {
    await cp.stop({ failed });
  }
}

/** Each side's write requests after `mark`, by "verb resource[/subresource]", and their total. */
export interface Writes {
  readonly total: number;
  readonly byKind: string;
}

function writesOf(cp: ControlPlane, user: string, mark: AuditMark): Writes {
  const kinds = new Map<string, number>();
  for (const e of cp.auditEvents({ user, verb: WRITE_VERBS }, mark)) {
    const o = e.objectRef ?? {};
    const k = `${e.verb} ${o.resource ?? '?'}${o.subresource ? `/${o.subresource}` : ''}`;
    kinds.set(k, (kinds.get(k) ?? 0) + 1);
  }
  const total = [...kinds.values()].reduce((a, b) => a + b, 0);
  const byKind =
    [...kinds]
      .sort()
      .map(([k, n]) => `${n} ${k}`)
      .join(', ') || 'none';
  return { total, byKind };
}

export function writesPair(cp: ControlPlane, mark: AuditMark): { npd: Writes; ours: Writes } {
  return { npd: writesOf(cp, NPD_USER, mark), ours: writesOf(cp, AGENT_USER, mark) };
}
