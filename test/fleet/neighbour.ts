/**
 * The neighbour's parent side: RBAC for the system:nodes group on Leases (the harness runs RBAC alone,
 * no Node authorizer), the kubelet-like identities' static tokens, the forked renewer
 * (neighbour-worker.ts) and its latency figures per window.
 */
import { type ChildProcess, fork } from 'node:child_process';
import { join } from 'node:path';
import type { ControlPlane } from '../e2e/harness/controlplane.ts';
import { fleetNodeName, staticToken } from './identities.ts';
import { mapLimit } from './util.ts';

const WORKER = join(import.meta.dirname, 'neighbour-worker.ts');

export interface LeaseStats {
  readonly count: number;
  /** Latencies (ms) of the successful renewals. */
  readonly latencies: number[];
  readonly codes: Record<string, number>;
  /** The APF FlowSchema names the renewals were classified into. */
  readonly flowSchemas: string[];
}

async function grantLeases(cp: ControlPlane): Promise<void> {
  const rbac = '/apis/rbac.authorization.k8s.io/v1';
  for (const [path, body] of [
    [
      `${rbac}/clusterroles`,
      {
        metadata: { name: 'npd-fleet-node-lease' },
        rules: [
          {
            apiGroups: ['coordination.k8s.io'],
            resources: ['leases'],
            verbs: ['get', 'create', 'update', 'patch'],
          },
        ],
      },
    ],
    [
      `${rbac}/clusterrolebindings`,
      {
        metadata: { name: 'npd-fleet-node-lease' },
        roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'ClusterRole', name: 'npd-fleet-node-lease' },
        subjects: [{ apiGroup: 'rbac.authorization.k8s.io', kind: 'Group', name: 'system:nodes' }],
      },
    ],
  ] as const) {
    const r = await cp.request('POST', path, { body });
    if (r.status !== 201) throw new Error(`POST ${path}: ${r.status} ${r.text}`);
  }
}

export class Neighbour {
  private readonly child: ChildProcess;
  private next = 1;
  private readonly waiting = new Map<number, (v: unknown) => void>();
  private readonly uidNames = new Map<string, string>();
  private readonly cp: ControlPlane;

  private constructor(cp: ControlPlane) {
    this.cp = cp;
    this.child = fork(WORKER, [], {
      execArgv: ['--import', 'tsx'],
      stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
    });
    this.child.on('message', (m: { id: number; result: unknown }) => {
      this.waiting.get(m.id)?.(m.result);
      this.waiting.delete(m.id);
    });
  }

  private send(msg: Record<string, unknown>): Promise<unknown> {
    const id = this.next++;
    return new Promise((resolve) => {
      this.waiting.set(id, resolve);
      this.child.send({ id, ...msg });
    });
  }

  /** `nodes` kubelets (the users of fleetStaticUsers) renewing their Leases every `periodMs`. */
  static async start(cp: ControlPlane, nodes: number, periodMs = 10_000): Promise<Neighbour> {
    await grantLeases(cp);
    const names = Array.from({ length: nodes }, (_, i) => fleetNodeName(i));
    const leases = await mapLimit(names, 16, async (name) => ({
      name,
      token: await staticToken(cp, `system:node:${name}`),
    }));
    const n = new Neighbour(cp);
    await n.send({ cmd: 'start', url: cp.url, periodMs, leases });
    return n;
  }

  /** The renewals started within [from, to); FlowSchemas by name (read now: the API server may be down). */
  async stats(from: number, to: number): Promise<LeaseStats> {
    const s = (await this.send({ cmd: 'stats', from, to })) as LeaseStats;
    try {
      const fs = (await this.cp.request('GET', '/apis/flowcontrol.apiserver.k8s.io/v1/flowschemas')).json as {
        items: { metadata: { name: string; uid: string } }[];
      };
      for (const i of fs.items) this.uidNames.set(i.metadata.uid, i.metadata.name);
    } catch {
      // named by uid
    }
    return { ...s, flowSchemas: s.flowSchemas.filter(Boolean).map((u) => this.uidNames.get(u) ?? u) };
  }

  async stop(): Promise<void> {
    await this.send({ cmd: 'stop' });
    this.child.disconnect();
  }
}
