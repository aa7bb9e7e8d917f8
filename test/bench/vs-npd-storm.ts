/**
 * The event storm side by side: NPD and this agent report to the same real kube-apiserver (the e2e
 * harness) as two Nodes, each with its own user, while distinct OOM-kill lines arrive on /dev/kmsg.
 * Both connect the way NPD documents: --apiserver-override=<url>?inClusterConfig=false&auth=<kubeconfig>.
 */
import { randomBytes } from 'node:crypto';
import { AGENT_USER, type ControlPlane, startControlPlane } from '../e2e/harness/controlplane.ts';
import { runWriter } from './kmsg-writer.ts';
import type { NpdBuild } from './npd-go.ts';
import { formatUsage, loadNote, measure, statusKiB } from './proc.ts';
import { kernelMonitorJson, type Pair, startPair, stopPair } from './vs-npd-pair.ts';

export interface StormFigures {
  readonly hwm: { npd: number; ours: number };
  readonly load: string;
}

const NPD_USER = 'npd-go-bench';
const NPD_NODE = 'npd-go-bench-node';

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

function printStorm(cp: ControlPlane, pair: Pair, mark: ReturnType<ControlPlane['auditMark']>): void {
  const writes = (user: string) =>
    ['create', 'patch'].map((verb) => cp.countAudit({ user, resource: 'events', verb }, mark)).join(' / ');
  console.log(
    `  apiserver audit log, events create / patch: NPD ${writes(NPD_USER)}, this agent ${writes(AGENT_USER)}`,
  );
  const exited = [pair.npd, pair.ours].filter((p) => p.child.exitCode !== null);
  if (exited.length > 0) console.log(`  exited during the storm: ${exited.map((p) => p.pid).join(', ')}`);
}

async function storm(cp: ControlPlane, build: NpdBuild, o: StormOptions): Promise<StormFigures> {
  const npdKubeconfig = await cp.writeKubeconfig(NPD_USER, { clusterRole: cp.clusterRoleName });
  await registerNpdNode(cp);
  const config = kernelMonitorJson(build);
  const pair = await startPair(build, {
    npd: reportingArgs(cp, config, NPD_NODE, npdKubeconfig),
    ours: reportingArgs(cp, config, cp.nodeName, cp.agentKubeconfig),
  });
  try {
    await new Promise((r) => setTimeout(r, 5000));
    const mark = cp.auditMark();
    const marker = `npdvs${randomBytes(4).toString('hex')}`;
    const windowMs = (o.stormSeconds + 20) * 1000;
    const [usage] = await Promise.all([
      Promise.all([measure(pair.npd.pid, windowMs), measure(pair.ours.pid, windowMs)]),
      runWriter({ rate: 0, seconds: o.stormSeconds, marks: o.stormLines, shape: 'oom-kill' }, marker),
    ]);
    console.log(`## Event storm: ${o.stormLines} distinct OOM-kill lines in ${o.stormSeconds} s, then 20 s`);
    console.log(`  NPD:        ${formatUsage(usage[0])}`);
    console.log(`  this agent: ${formatUsage(usage[1])}`);
    printStorm(cp, pair, mark);
    return {
      hwm: { npd: statusKiB(pair.npd.pid, 'VmHWM'), ours: statusKiB(pair.ours.pid, 'VmHWM') },
      load: loadNote(),
    };
  } finally {
    await stopPair(pair);
  }
}

interface StormOptions {
  readonly stormLines: number;
  readonly stormSeconds: number;
}

export async function stormSideBySide(build: NpdBuild, o: StormOptions): Promise<StormFigures> {
  const cp = await startControlPlane({ users: [{ name: NPD_USER }] });
  let failed = true;
  try {
    const figures = await storm(cp, build, o);
    failed = false;
    return figures;
  } finally {
    await cp.stop({ failed });
  }
}
