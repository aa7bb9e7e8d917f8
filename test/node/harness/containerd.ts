/**
 * containerd (Debian's package) with runc, as the node's CRI runtime. Root and state live in the test
 * folder; the socket is the standard /run/containerd/containerd.sock, because that is where the
 * shipped node-probes component mounts it from. Stopping kills the daemon only (systemd's
 * KillMode=process for containerd.service): the shims and the containers they hold keep running.
 */
import * as fs from 'node:fs';
import * as path from 'node:path';
import { ManagedProcess, readTail, run, sleep } from '../../e2e/harness/processes.ts';
import { writeCniConfig } from './network.ts';

export const CONTAINERD_SOCKET = '/run/containerd/containerd.sock';
export const PAUSE_IMAGE = 'localhost/npd-pause:1';

export interface ContainerdLayout {
  dir: string;
  config: string;
  log: string;
}

/**
 * The CRI plugin pulls from `registry` (host:port of a plain-HTTP registry on 127.0.0.1) through a
 * hosts.toml under config_path, as a node configured for a private mirror does.
 */
export function prepareContainerd(workDir: string, registry: string): ContainerdLayout {
  const dir = path.join(workDir, 'containerd');
  fs.mkdirSync(dir, { recursive: true });
  const cniConf = path.join(dir, 'cni-conf');
  writeCniConfig(cniConf, path.join(dir, 'cni-ipam'));
  const certsD = path.join(dir, 'certs.d');
  fs.mkdirSync(path.join(certsD, registry), { recursive: true });
  fs.writeFileSync(
    path.join(certsD, registry, 'hosts.toml'),
    `server = "http://${registry}"\n[host."http://${registry}"]\n  capabilities = ["pull", "resolve"]\n`,
  );
  const config = path.join(dir, 'config.toml');
  // This kernel answers EIO to a negative oom_score_adj, which runc writes for every sandbox unless
  // restrict_oom_score_adj caps it at containerd's own (shared/reference/real-node.md).
  fs.writeFileSync(
    config,
    `version = 2
root = "${dir}/root"
state = "${dir}/state"
[grpc]
  address = "${CONTAINERD_SOCKET}"
[plugins."io.containerd.grpc.v1.cri"]
  sandbox_image = "${PAUSE_IMAGE}"
  restrict_oom_score_adj = true
  enable_selinux = false
  [plugins."io.containerd.grpc.v1.cri".registry]
    config_path = "${certsD}"
  [plugins."io.containerd.grpc.v1.cri".cni]
    bin_dir = "/usr/lib/cni"
    conf_dir = "${cniConf}"
  [plugins."io.containerd.grpc.v1.cri".containerd]
    snapshotter = "overlayfs"
    default_runtime_name = "runc"
    [plugins."io.containerd.grpc.v1.cri".containerd.runtimes.runc]
      runtime_type = "io.containerd.runc.v2"
      [plugins."io.containerd.grpc.v1.cri".containerd.runtimes.runc.options]
        SystemdCgroup = false
`,
  );
  return { dir, config, log: path.join(workDir, 'containerd.log') };
}

export class Containerd {
  private proc: ManagedProcess | undefined;
  readonly layout: ContainerdLayout;
  constructor(layout: ContainerdLayout) {
    this.layout = layout;
  }

  get running(): boolean {
    return this.proc !== undefined && !this.proc.exited;
  }

  /** `wrap`: how to run the daemon, e.g. as containerd.service's output in a journal (unit-output.ts). */
  async start(wrap: (argv: string[]) => string[] = (argv) => argv): Promise<void> {
    if (this.running) throw new Error('containerd is already running');
    fs.rmSync(CONTAINERD_SOCKET, { force: true });
    this.proc = new ManagedProcess(
      'containerd',
      wrap(['containerd', '--config', this.layout.config]),
      this.layout.log,
    );
    const deadline = Date.now() + 60_000;
    while (Date.now() < deadline) {
      if (this.proc.exited) {
        throw new Error(`containerd exited (${this.proc.describeExit()}):\n${readTail(this.layout.log, 30)}`);
      }
      if ((await this.ctr(['version'], true)).code === 0) return;
      await sleep(200);
    }
    throw new Error(`containerd did not answer on ${CONTAINERD_SOCKET}:\n${readTail(this.layout.log, 30)}`);
  }

  /** SIGTERM to the daemon alone, as systemctl stop containerd does; its shims stay. */
  async stop(): Promise<void> {
    const p = this.proc;
    if (!p || p.exited) return;
    process.kill(p.child.pid as number, 'SIGTERM');
    const deadline = Date.now() + 20_000;
    while (!p.exited && Date.now() < deadline) await sleep(50);
    if (!p.exited) process.kill(p.child.pid as number, 'SIGKILL');
  }

  ctr(args: string[], allowFail = false) {
    return run('ctr', ['--address', CONTAINERD_SOCKET, '-n', 'k8s.io', ...args], { timeoutMs: 600_000 }).then(
      (r) => {
        if (r.code !== 0 && !allowFail) throw new Error(`ctr ${args.join(' ')}: ${r.stderr.trim()}`);
        return r;
      },
    );
  }

  /** Imports an OCI archive (podman save --format oci-archive) into the k8s.io namespace. */
  async importArchive(archive: string, ref: string): Promise<void> {
    await this.ctr(['images', 'import', '--base-name', ref.replace(/:[^:/]+$/, ''), '--digests', archive]);
    const list = await this.ctr(['images', 'ls', '-q']);
    if (!list.stdout.split('\n').includes(ref)) {
      throw new Error(`ctr import of ${archive} did not give ${ref}; images:\n${list.stdout}`);
    }
  }

  /** Kills every task left in k8s.io (after the kubelet is gone), then the daemon and its group. */
  async stopAll(): Promise<void> {
    if (this.running) {
      const tasks = await this.ctr(['tasks', 'ls', '-q'], true);
      for (const id of tasks.stdout.split('\n').filter(Boolean))
        await this.ctr(['tasks', 'kill', '-s', 'KILL', id], true);
    }
    await this.proc?.stop();
    await killShims();
  }
}

/** containerd-shim-runc-v2 processes of this test's containerd, which run in their own process groups. */
async function killShims(): Promise<void> {
  const r = await run('pkill', [
    '-KILL',
    '-f',
    `containerd-shim-runc-v2 -namespace k8s.io .*-address ${CONTAINERD_SOCKET}`,
  ]);
  if (r.code > 1) throw new Error(`pkill shims: ${r.stderr}`);
}
