/**
 * A single-node cluster for test/node: etcd, kube-apiserver, kube-controller-manager, kube-scheduler
 * and a kubelet, all one Kubernetes build (test/e2e/controlplane/build.sh), with containerd + runc and
 * CNI bridge networking from Debian's packages.
 *
 * Pods reach kube-apiserver as in-cluster clients do, through KUBERNETES_SERVICE_HOST:PORT (the
 * kubernetes Service), without kube-proxy: the Service range starts at the node's bridge address and
 * kube-apiserver listens on that address and on 443, the Service's port, so the Service IP is the
 * apiserver itself. Everything stays on this machine (network.ts).
 *
 *   const node = await startNodeCluster();
 *   try { await node.kubectl(['get', 'nodes']); } finally { await node.stop(); }
 */
import * as fs from 'node:fs';
import * as path from 'node:path';
import { type ControlPlane, startControlPlane } from '../../e2e/harness/controlplane.ts';
import { type ManagedProcess, sleep } from '../../e2e/harness/processes.ts';
import { ensureReleaseTools, type Registry, startRegistry } from '../../release/tools.ts';
import { Containerd, PAUSE_IMAGE, prepareContainerd } from './containerd.ts';
import { Controllers } from './controllers.ts';
import { ensureSystemBus, stopSystemBus } from './dbus.ts';
import { AGENT_SOURCE, ensurePauseImage, pushImage, saveImage } from './images.ts';
import { Kubelet, prepareKubelet } from './kubelet.ts';
import { removeLeftovers, unmountUnder } from './leftovers.ts';
import { createBridge, deleteBridge, NODE_IP, SERVICE_RANGE } from './network.ts';

export const NODE_NAME = 'npd-node';
const KUBELET_USER = `system:node:${NODE_NAME}`;
const CM_USER = 'system:kube-controller-manager';
const SCHED_USER = 'system:kube-scheduler';

export interface NodeCluster {
  cp: ControlPlane;
  nodeName: string;
  containerd: Containerd;
  kubelet: Kubelet;
  workDir: string;
  /** The agent image as the kubelet pulls it: <registry on 127.0.0.1>/node-problem-detector:ci. */
  agentImage: string;
  kubectl(args: string[], input?: string): Promise<string>;
  kubectlResult(args: string[], input?: string): ReturnType<ControlPlane['kubectlResult']>;
  /** Pushes the agent image under a second tag (for a rolling update); returns its reference. */
  tagAgentImage(tag: string): Promise<string>;
  stop(opts?: { failed?: boolean }): Promise<void>;
}

function log(line: string): void {
  if (process.env.NPD_E2E_VERBOSE === '1') process.stderr.write(`[node] ${line}\n`);
}

async function waitNodeReady(cp: ControlPlane, timeoutMs: number): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  let last = '';
  while (Date.now() < deadline) {
    const r = await cp.kubectlResult([
      'get',
      'node',
      NODE_NAME,
      '-o',
      'jsonpath={.status.conditions[?(@.type=="Ready")].status}',
    ]);
    last = r.code === 0 ? r.stdout : r.stderr;
    if (last === 'True') return;
    await sleep(1000);
  }
  throw new Error(`node ${NODE_NAME} not Ready after ${timeoutMs} ms (${last})`);
}

function agentRef(registry: Registry, tag: string): string {
  return `${registry.host}/node-problem-detector:${tag}`;
}

async function startRuntime(workDir: string, registry: Registry): Promise<Containerd> {
  await pushImage(AGENT_SOURCE, agentRef(registry, 'ci'));
  const containerd = new Containerd(prepareContainerd(workDir, registry.host));
  await containerd.start();
  await ensurePauseImage();
  const archive = await saveImage(PAUSE_IMAGE, workDir);
  await containerd.importArchive(archive, PAUSE_IMAGE);
  fs.rmSync(archive, { force: true });
  return containerd;
}

export async function startNodeCluster(): Promise<NodeCluster> {
  await removeLeftovers();
  await createBridge();
  const cp = await startControlPlane({
    nodeName: NODE_NAME,
    nodeCluster: { address: NODE_IP, port: 443, serviceClusterIpRange: SERVICE_RANGE },
    users: [
      { name: KUBELET_USER, groups: ['system:nodes'] },
      { name: CM_USER, groups: [] },
      { name: SCHED_USER, groups: [] },
    ],
    log,
  });
  const parts: Parts = {};
  try {
    parts.dbus = await ensureSystemBus(cp.workDir);
    const b = cp.binaries;
    if (!b.kubelet || !b.kubeControllerManager || !b.kubeScheduler)
      throw new Error('build.sh gave no node binaries');
    parts.registry = await startRegistry((await ensureReleaseTools()).crane);
    parts.containerd = await startRuntime(cp.workDir, parts.registry);
    parts.controllers = new Controllers({
      workDir: cp.workDir,
      controllerManager: b.kubeControllerManager,
      scheduler: b.kubeScheduler,
      controllerManagerKubeconfig: await cp.writeKubeconfig(CM_USER),
      schedulerKubeconfig: await cp.writeKubeconfig(SCHED_USER),
      caFile: cp.caFile,
      saKey: path.join(cp.workDir, 'sa.key'),
    });
    await parts.controllers.start();
    parts.kubelet = new Kubelet(
      prepareKubelet(cp.workDir, await cp.writeKubeconfig(KUBELET_USER), NODE_NAME, b.kubelet),
    );
    await parts.kubelet.start();
    await waitNodeReady(cp, 120_000);
    log(`node ${NODE_NAME} Ready`);
  } catch (e) {
    await stopParts(cp, parts, true);
    throw e;
  }
  return nodeClusterObject(cp, parts as Running);
}

interface Parts {
  containerd?: Containerd;
  kubelet?: Kubelet;
  controllers?: Controllers;
  dbus?: ManagedProcess | undefined;
  registry?: Registry;
}
type Running = Required<Omit<Parts, 'dbus'>> & Parts;

function nodeClusterObject(cp: ControlPlane, parts: Running): NodeCluster {
  return {
    cp,
    nodeName: NODE_NAME,
    containerd: parts.containerd,
    kubelet: parts.kubelet,
    workDir: cp.workDir,
    agentImage: agentRef(parts.registry, 'ci'),
    kubectl: (args, input) => cp.kubectl(args, input === undefined ? {} : { input }),
    kubectlResult: (args, input) => cp.kubectlResult(args, input === undefined ? {} : { input }),
    async tagAgentImage(tag) {
      const ref = agentRef(parts.registry, tag);
      await pushImage(AGENT_SOURCE, ref);
      return ref;
    },
    stop: (opts = {}) => stopParts(cp, parts, opts.failed === true),
  };
}

/** Pods first (a stopped kubelet leaves its pods running), then kubelet, tasks, containerd, the rest. */
async function stopParts(cp: ControlPlane, parts: Parts, failed: boolean): Promise<void> {
  const errors: unknown[] = [];
  const attempt = async (f: () => Promise<unknown>) => {
    try {
      await f();
    } catch (e) {
      errors.push(e);
    }
  };
  if (parts.kubelet?.running) {
    await attempt(() =>
      cp.kubectlResult([
        'delete',
        'daemonsets,deployments,pods',
        '--all',
        '-A',
        '--wait=true',
        '--timeout=60s',
      ]),
    );
  }
  if (parts.kubelet) await attempt(() => (parts.kubelet as Kubelet).stop());
  if (parts.containerd) await attempt(() => (parts.containerd as Containerd).stopAll());
  if (parts.controllers) await attempt(() => (parts.controllers as Controllers).stop());
  await attempt(() => stopSystemBus(parts.dbus));
  if (parts.registry) await attempt(() => (parts.registry as Registry).stop());
  await attempt(() => unmountUnder(cp.workDir));
  await attempt(() => cp.stop({ failed: failed || errors.length > 0 }));
  await attempt(deleteBridge);
  if (errors.length) throw errors[0];
}
