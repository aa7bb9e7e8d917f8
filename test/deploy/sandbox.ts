// Helpers of the pod-sandbox-*.test.ts files: they run the built agent (dist/main.js) the way the
// DaemonSet in deploy/base runs it, without a container engine. A private mount namespace gets the pod's
// read-only hostPath mounts below a sandbox --host-root and the rendered ConfigMaps at <sandbox>/config;
// the command then runs as uid 0 with exactly the given capability set (setpriv bounding set +
// no_new_privs, as allowPrivilegeEscalation: false gives).
import assert from 'node:assert/strict';
import { type ChildProcess, execFileSync, spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { chmodSync, existsSync, mkdirSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parse as parseYaml } from 'yaml';
import { freePort, metricValue, waitFor } from '../support/agent-process.ts';
import {
  agentContainer,
  configMapData,
  KUBECTL,
  type Mount,
  one,
  podSpec,
  ROOT,
  renderBase,
  type Volume,
} from './support.ts';

/** The path of `cmd` on PATH, or undefined. */
export function which(cmd: string): string | undefined {
  try {
    return execFileSync('bash', ['-c', `command -v ${cmd}`], { encoding: 'utf8' }).trim() || undefined;
  } catch {
    return undefined;
  }
}

/** Why the sandbox cannot run here, or false. */
export function sandboxSkip(): string | false {
  if (process.platform !== 'linux') return 'Linux only';
  if (process.getuid?.() !== 0) return 'needs root (mount namespace, bind mounts, setpriv)';
  for (const cmd of ['unshare', 'setpriv', 'mount']) if (!which(cmd)) return `${cmd} not found`;
  if (!existsSync(KUBECTL)) return `${KUBECTL} not found`;
  if (!existsSync('/dev/kmsg')) return 'no /dev/kmsg';
  try {
    execFileSync('unshare', ['--mount', '--propagation', 'private', 'true'], { stdio: 'pipe' });
  } catch (err) {
    return `cannot create a mount namespace here: ${(err as Error).message.split('\n')[0]}`;
  }
  return false;
}

export const dmesgRestricted = (): boolean => {
  try {
    return readFileSync('/proc/sys/kernel/dmesg_restrict', 'utf8').trim() === '1';
  } catch {
    return false;
  }
};

/** What the sandbox reproduces of the DaemonSet's pod (not its device cgroup: see test/container). */
export interface Pod {
  args: string[];
  /** The capabilities the container gets; `add: ['ALL']` for a privileged one. */
  caps: { add: string[]; drop: string[] };
  runAsUser: number;
  mounts: Mount[];
  volumes: Volume[];
  configData: Record<string, string>;
}

function renderedPod(): Pod {
  const docs = renderBase();
  const ds = one(docs, 'DaemonSet');
  const c = agentContainer(ds);
  const security = c.securityContext as {
    privileged?: boolean;
    capabilities?: Pod['caps'];
    runAsUser: number;
  };
  // A privileged container has every capability, whatever its capabilities list says.
  const caps = security.privileged ? { add: ['ALL'], drop: [] } : security.capabilities;
  assert.ok(caps, 'the container is privileged or lists its capabilities');
  return {
    args: c.args,
    caps,
    runAsUser: security.runAsUser,
    mounts: c.volumeMounts,
    volumes: podSpec(ds).volumes,
    // Every ConfigMap of the base is projected into the one config volume.
    configData: configMapData(docs),
  };
}

function ensureBuilt(): void {
  if (existsSync(join(ROOT, 'dist/main.js'))) return;
  execFileSync(process.execPath, ['--import', 'tsx', 'test/tools/build.ts'], { cwd: ROOT, stdio: 'pipe' });
}

/**
 * Builds the agent if needed, renders the pod and writes its ConfigMaps to <sandbox>/config. `monitors`
 * are the sources of the monitor configs the pod's args name.
 */
export function prepareSandbox(): { pod: Pod; sandbox: string; monitors: string[] } {
  ensureBuilt();
  const pod = renderedPod();
  const sandbox = mkdtempSync(join(tmpdir(), 'npd-pod-'));
  chmodSync(sandbox, 0o755);
  mkdirSync(join(sandbox, 'config'), { recursive: true });
  for (const [file, text] of Object.entries(pod.configData))
    writeFileSync(join(sandbox, 'config', file), text);
  const configured = pod.args
    .filter((a) => a.startsWith('--config.'))
    .flatMap((a) => a.slice(a.indexOf('=') + 1).split(','))
    .map((f) => f.slice('/config/'.length));
  const monitors = configured.map((f) => {
    const m = /^source:\s*(\S+)/m.exec(pod.configData[f] ?? '');
    assert.ok(m, `${f} has a source`);
    return m[1]!;
  });
  return { pod, sandbox, monitors };
}

const q = (s: string): string => `'${s.replaceAll("'", "'\\''")}'`;

/** Shell lines that mount one of the pod's volumes at its place below `sandbox`. */
function mountLines(v: Volume, m: Mount, sandbox: string): string[] {
  const target = join(sandbox, m.mountPath);
  if (v.configMap || v.projected) return []; // written by prepareSandbox
  if (v.emptyDir) return [`mkdir -p ${q(target)}`];
  const { path: src, type } = v.hostPath!;
  const lines =
    type === 'CharDevice' || type === 'File'
      ? [`mkdir -p ${q(join(target, '..'))}`, `touch ${q(target)}`]
      : [`mkdir -p ${q(target)}`];
  // DirectoryOrCreate would create the path on the host; the sandbox leaves the host alone.
  const guard = type === 'DirectoryOrCreate' ? `[ -e ${q(src)} ] && ` : '';
  lines.push(`${guard}mount --rbind ${q(src)} ${q(target)} || true`);
  if (m.readOnly) lines.push(`${guard}mount -o remount,bind,ro ${q(target)} || true`);
  // Fail loudly if a required mount did not happen.
  if (!guard) lines.push(`mountpoint -q ${q(target)} || { echo "not mounted: ${target}" >&2; exit 97; }`);
  return lines;
}

/**
 * A bash script, run under `unshare --mount`, that builds the pod's file system view in `sandbox` and
 * then execs `command` as uid 0 limited to `caps`.
 */
function sandboxScript(
  pod: Pod,
  sandbox: string,
  caps: readonly string[],
  command: readonly string[],
): string {
  const lines = ['set -euo pipefail'];
  for (const m of pod.mounts) {
    const v = pod.volumes.find((x) => x.name === m.name);
    // /etc/localtime would be the host's own file again: nothing to reproduce.
    if (!v || m.mountPath === '/etc/localtime') continue;
    lines.push(...mountLines(v, m, sandbox));
  }
  // `ALL` is every capability; a `-NAME` after it removes one.
  const bounding = ['-all', ...caps.map((c) => (c.startsWith('-') ? c : `+${c}`).toLowerCase())].join(',');
  lines.push(
    `exec setpriv --reuid=${pod.runAsUser} --regid=${pod.runAsUser} --clear-groups --inh-caps=-all ` +
      `--bounding-set=${bounding} --no-new-privs -- ${command.map(q).join(' ')}`,
  );
  return `${lines.join('\n')}\n`;
}

/** Writes the script that runs `command` in the sandbox; returns the unshare command line for it. */
function sandboxed(
  pod: Pod,
  sandbox: string,
  caps: readonly string[],
  command: readonly string[],
): [string, string[]] {
  const script = join(sandbox, `run-${randomBytes(3).toString('hex')}.sh`);
  writeFileSync(script, sandboxScript(pod, sandbox, caps, command));
  return ['unshare', ['--mount', '--propagation', 'private', 'bash', script]];
}

/** The agent command line of the pod, with paths moved into the sandbox and listeners on loopback. */
function agentCommand(pod: Pod, sandbox: string, ports: [number, number], extraConfig?: string): string[] {
  const drop = /^--(address|port|prometheus-address|prometheus-port|enable-k8s-exporter)=/;
  const args = pod.args
    .filter((a) => !drop.test(a))
    .map((a) =>
      a
        .replaceAll('/config/', `${join(sandbox, 'config')}/`)
        .replace(/^--host-root=(.*)$/, (_, p: string) => `--host-root=${join(sandbox, p)}`),
    )
    .map((a) => (extraConfig && a.startsWith('--config.system-log-monitor=') ? `${a},${extraConfig}` : a));
  return [
    process.execPath,
    join(ROOT, 'dist/main.js'),
    ...args,
    '--enable-k8s-exporter=false',
    '--address=127.0.0.1',
    `--port=${ports[0]}`,
    '--prometheus-address=127.0.0.1',
    `--prometheus-port=${ports[1]}`,
  ];
}

export interface Running {
  child: ChildProcess;
  metricsUrl: string;
  statusUrl: string;
  output(): string;
  stop(): Promise<void>;
}

/** Starts the agent in the sandbox with `caps`; resolves once its status server answers. */
export async function runAgentInSandbox(
  pod: Pod,
  sandbox: string,
  caps: readonly string[],
  extraConfig?: string,
): Promise<Running> {
  const [port, promPort] = [await freePort(), await freePort()];
  const command = agentCommand(pod, sandbox, [port, promPort], extraConfig);
  const child = spawn(...sandboxed(pod, sandbox, caps, command), {
    stdio: ['ignore', 'pipe', 'pipe'],
    env: { ...process.env, NODE_OPTIONS: '' },
  });
  let out = '';
  const collect = (d: Buffer) => {
    out += d.toString();
  };
  child.stdout?.on('data', collect);
  child.stderr?.on('data', collect);
  const exited = new Promise<void>((r) => child.once('exit', () => r()));
  const statusUrl = `http://127.0.0.1:${port}`;
  await waitFor(
    async () => {
      if (child.exitCode !== null) throw new Error(`agent exited ${child.exitCode}`);
      return (await fetch(`${statusUrl}/healthz`)).status > 0;
    },
    30_000,
    () => out,
  );
  return {
    child,
    metricsUrl: `http://127.0.0.1:${promPort}/metrics`,
    statusUrl,
    output: () => out,
    async stop() {
      if (child.exitCode === null) child.kill('SIGTERM');
      await exited;
    },
  };
}

/** Runs a short node script in the sandbox with the given capabilities; returns its JSON output. */
export function probeInSandbox(
  pod: Pod,
  sandbox: string,
  caps: readonly string[],
  code: string,
): Record<string, string> {
  const out = execFileSync(...sandboxed(pod, sandbox, caps, [process.execPath, '-e', code]), {
    encoding: 'utf8',
    env: { ...process.env, NODE_OPTIONS: '' },
  });
  return JSON.parse(out) as Record<string, string>;
}

/** Waits until the metric `series` of the running agent satisfies `ok`. */
export const waitForMetric = (
  agent: Running,
  series: string,
  ok: (v: number | undefined) => boolean,
  timeoutMs = 20_000,
): Promise<void> =>
  waitFor(async () => ok(await metricValue(agent.metricsUrl, series)), timeoutMs, agent.output);

/** [source, probe name] of every enabled probe in the probe-monitor configs the pod runs. */
export function enabledProbes(pod: Pod): [string, string][] {
  const out: [string, string][] = [];
  for (const a of pod.args.filter((x) => x.startsWith('--config.probe-monitor='))) {
    for (const f of a.slice(a.indexOf('=') + 1).split(',')) {
      const cfg = parseYaml(pod.configData[f.slice('/config/'.length)] ?? '') as {
        source: string;
        probes: { kind: string; name?: string; enabled?: boolean }[];
      };
      for (const p of cfg.probes) if (p.enabled !== false) out.push([cfg.source, p.name ?? p.kind]);
    }
  }
  return out;
}
