/**
 * The node's kubelet: cgroupfs driver on this machine's cgroup v1 hierarchy, containerd's CRI socket,
 * its root, certificates and logs in the test folder. It registers the Node itself, as system:node:<n>
 * (a static-token user in system:nodes, so the Node authorizer and NodeRestriction apply to it), and
 * reports status every 10 s so a test sees several kubelet status updates within a minute.
 */
import * as fs from 'node:fs';
import * as path from 'node:path';
import { ManagedProcess, readTail, sleep } from '../../e2e/harness/processes.ts';
import { CONTAINERD_SOCKET } from './containerd.ts';
import { NODE_IP } from './network.ts';

/** kubelet's defaults, which the node-probes component's kubelet probe targets (127.0.0.1:10248). */
export const KUBELET_HEALTHZ = 'http://127.0.0.1:10248/healthz';
export const KUBELET_PORT = 10250;

export interface KubeletLayout {
  rootDir: string;
  config: string;
  log: string;
  argv: string[];
}

function kubeletConfig(): string {
  // JSON is YAML. Each setting's reason: shared/reference/real-node.md and test/node/README.md.
  return JSON.stringify(
    {
      apiVersion: 'kubelet.config.k8s.io/v1beta1',
      kind: 'KubeletConfiguration',
      cgroupDriver: 'cgroupfs',
      failSwapOn: false,
      containerRuntimeEndpoint: `unix://${CONTAINERD_SOCKET}`,
      enforceNodeAllocatable: [],
      localStorageCapacityIsolation: false,
      readOnlyPort: 0,
      address: NODE_IP,
      port: KUBELET_PORT,
      healthzBindAddress: '127.0.0.1',
      healthzPort: 10248,
      // kube-apiserver calls the kubelet (logs, exec) without a client certificate here.
      authentication: { anonymous: { enabled: true }, webhook: { enabled: false } },
      authorization: { mode: 'AlwaysAllow' },
      nodeStatusUpdateFrequency: '10s',
      nodeStatusReportFrequency: '10s',
      syncFrequency: '10s',
      imageGCHighThresholdPercent: 100,
      imageGCLowThresholdPercent: 99,
      serializeImagePulls: false,
      clusterDomain: 'cluster.local',
      resolvConf: '/etc/resolv.conf',
    },
    null,
    2,
  );
}

export function prepareKubelet(
  workDir: string,
  kubeconfig: string,
  nodeName: string,
  binary: string,
): KubeletLayout {
  const rootDir = path.join(workDir, 'kubelet');
  fs.mkdirSync(rootDir, { recursive: true });
  const config = path.join(workDir, 'kubelet-config.yaml');
  fs.writeFileSync(config, kubeletConfig());
  const argv = [
    binary,
    `--config=${config}`,
    `--kubeconfig=${kubeconfig}`,
    `--hostname-override=${nodeName}`,
    `--node-ip=${NODE_IP}`,
    `--root-dir=${rootDir}`,
    `--cert-dir=${path.join(rootDir, 'pki')}`,
    '--v=2',
  ];
  return { rootDir, config, log: path.join(workDir, 'kubelet.log'), argv };
}

export class Kubelet {
  private proc: ManagedProcess | undefined;
  readonly layout: KubeletLayout;
  constructor(layout: KubeletLayout) {
    this.layout = layout;
  }

  get running(): boolean {
    return this.proc !== undefined && !this.proc.exited;
  }

  /** Epoch ms of the last start: a new kubelet fetches every projected token again. */
  startedAt = 0;

  get pid(): number | undefined {
    return this.running ? this.proc?.pid : undefined;
  }

  /** `wrap`: how to run the kubelet, e.g. as kubelet.service's output in a journal (unit-output.ts). */
  async start(wrap: (argv: string[]) => string[] = (argv) => argv): Promise<void> {
    if (this.running) throw new Error('kubelet is already running');
    this.proc = new ManagedProcess('kubelet', wrap(this.layout.argv), this.layout.log);
    this.startedAt = Date.now();
    const deadline = Date.now() + 120_000;
    while (Date.now() < deadline) {
      if (this.proc.exited) {
        throw new Error(`kubelet exited (${this.proc.describeExit()}):\n${readTail(this.layout.log, 40)}`);
      }
      try {
        const r = await fetch(KUBELET_HEALTHZ, { signal: AbortSignal.timeout(2000) });
        if (r.ok) return;
      } catch {
        // not listening yet
      }
      await sleep(250);
    }
    throw new Error(`kubelet /healthz not ok after 120 s:\n${readTail(this.layout.log, 40)}`);
  }

  /** Stops the kubelet alone: its pods keep running, as after systemctl stop kubelet. */
  async stop(): Promise<void> {
    await this.proc?.stop(15_000);
  }
}
