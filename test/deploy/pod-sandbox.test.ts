// Runs the built agent (dist/main.js) the way the DaemonSet in deploy/base runs it, without a container
// engine: a private mount namespace gets the pod's read-only hostPath mounts below a sandbox --host-root
// and the rendered ConfigMap at <sandbox>/config; the agent then runs as uid 0 with exactly the pod's
// capability set (setpriv bounding set + no_new_privs, as allowPrivilegeEscalation: false gives).
// It proves that those capabilities are enough for every configured monitor, that SYSLOG is needed
// (when kernel.dmesg_restrict=1), and what uid 0 without capabilities cannot do.
// Needs root, unshare, setpriv and kubectl; skipped otherwise.
//   node --import tsx --test test/deploy/pod-sandbox.test.ts
import assert from 'node:assert/strict';
import { type ChildProcess, execFileSync, spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { chmodSync, chownSync, existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { parseAllDocuments, parse as parseYaml } from 'yaml';
import { freePort, metricValue, waitFor } from '../support/agent-process.ts';

const ROOT = resolve(import.meta.dirname, '..', '..');
const KUBECTL = '/usr/bin/kubectl';

function which(cmd: string): string | undefined {
  try {
    return execFileSync('bash', ['-c', `command -v ${cmd}`], { encoding: 'utf8' }).trim() || undefined;
  } catch {
    return undefined;
  }
}

function skipReason(): string | false {
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

const dmesgRestricted = (): boolean => {
  try {
    return readFileSync('/proc/sys/kernel/dmesg_restrict', 'utf8').trim() === '1';
  } catch {
    return false;
  }
};

interface Mount {
  name: string;
  mountPath: string;
  readOnly?: boolean;
}
interface Volume {
  name: string;
  hostPath?: { path: string; type?: string };
  configMap?: { name: string };
  projected?: unknown;
  emptyDir?: unknown;
}
interface Pod {
  args: string[];
  caps: { add: string[]; drop: string[] };
  runAsUser: number;
  mounts: Mount[];
  volumes: Volume[];
  configData: Record<string, string>;
}

interface RenderedDoc {
  kind: string;
  data?: Record<string, string>;
  spec?: {
    template: {
      spec: {
        containers: {
          args: string[];
          securityContext: { capabilities: Pod['caps']; runAsUser: number };
          volumeMounts: Mount[];
        }[];
        volumes: Volume[];
      };
    };
  };
}

function renderedPod(): Pod {
  const out = execFileSync(KUBECTL, ['kustomize', join(ROOT, 'deploy/base')], { encoding: 'utf8' });
  const docs = parseAllDocuments(out).map((d) => d.toJS() as RenderedDoc);
  const ds = docs.find((d) => d.kind === 'DaemonSet')!;
  // Every ConfigMap of the base is projected into the one config volume.
  const configData = Object.assign({}, ...docs.filter((d) => d.kind === 'ConfigMap').map((d) => d.data));
  const spec = ds.spec!.template.spec;
  const c = spec.containers[0]!;
  return {
    args: c.args,
    caps: c.securityContext.capabilities,
    runAsUser: c.securityContext.runAsUser,
    mounts: c.volumeMounts,
    volumes: spec.volumes,
    configData,
  };
}

function ensureBuilt(): void {
  if (existsSync(join(ROOT, 'dist/main.js'))) return;
  execFileSync(process.execPath, ['--import', 'tsx', 'test/tools/build.ts'], { cwd: ROOT, stdio: 'pipe' });
}

const q = (s: string): string => `'${s.replaceAll("'", "'\\''")}'`;

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
    const target = join(sandbox, m.mountPath);
    if (v.configMap || v.projected) continue; // written by the test before the script runs
    if (v.emptyDir) {
      lines.push(`mkdir -p ${q(target)}`);
      continue;
    }
    const src = v.hostPath!.path;
    if (v.hostPath!.type === 'CharDevice' || v.hostPath!.type === 'File') {
      lines.push(`mkdir -p ${q(join(target, '..'))}`, `touch ${q(target)}`);
    } else {
      lines.push(`mkdir -p ${q(target)}`);
    }
    // DirectoryOrCreate would create the path on the host; the sandbox leaves the host alone.
    const guard = v.hostPath!.type === 'DirectoryOrCreate' ? `[ -e ${q(src)} ] && ` : '';
    lines.push(`${guard}mount --rbind ${q(src)} ${q(target)} || true`);
    if (m.readOnly) lines.push(`${guard}mount -o remount,bind,ro ${q(target)} || true`);
    // Fail loudly if a required mount did not happen.
    if (!guard) lines.push(`mountpoint -q ${q(target)} || { echo "not mounted: ${target}" >&2; exit 97; }`);
  }
  const bounding = ['-all', ...caps.map((c) => `+${c.toLowerCase()}`)].join(',');
  lines.push(
    `exec setpriv --reuid=${pod.runAsUser} --regid=${pod.runAsUser} --clear-groups --inh-caps=-all ` +
      `--bounding-set=${bounding} --no-new-privs -- ${command.map(q).join(' ')}`,
  );
  return `${lines.join('\n')}\n`;
}

interface Running {
  child: ChildProcess;
  metricsUrl: string;
  statusUrl: string;
  output(): string;
  stop(): Promise<void>;
}

async function runAgentInSandbox(
  pod: Pod,
  sandbox: string,
  caps: readonly string[],
  extraConfig?: string,
): Promise<Running> {
  const [port, promPort] = [await freePort(), await freePort()];
  const drop = /^--(address|port|prometheus-address|prometheus-port|enable-k8s-exporter)=/;
  const args = pod.args
    .filter((a) => !drop.test(a))
    .map((a) =>
      a
        .replaceAll('/config/', `${join(sandbox, 'config')}/`)
        .replace(/^--host-root=(.*)$/, (_, p: string) => `--host-root=${join(sandbox, p)}`),
    )
    .map((a) => (extraConfig && a.startsWith('--config.system-log-monitor=') ? `${a},${extraConfig}` : a));
  const command = [
    process.execPath,
    join(ROOT, 'dist/main.js'),
    ...args,
    '--enable-k8s-exporter=false',
    '--address=127.0.0.1',
    `--port=${port}`,
    '--prometheus-address=127.0.0.1',
    `--prometheus-port=${promPort}`,
  ];
  const script = join(sandbox, `run-${randomBytes(3).toString('hex')}.sh`);
  writeFileSync(script, sandboxScript(pod, sandbox, caps, command));
  const child = spawn('unshare', ['--mount', '--propagation', 'private', 'bash', script], {
    stdio: ['ignore', 'pipe', 'pipe'],
    env: { ...process.env, NODE_OPTIONS: '' },
  });
  let out = '';
  child.stdout?.on('data', (d: Buffer) => {
    out += d.toString();
  });
  child.stderr?.on('data', (d: Buffer) => {
    out += d.toString();
  });
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
function probeInSandbox(
  pod: Pod,
  sandbox: string,
  caps: readonly string[],
  code: string,
): Record<string, string> {
  const script = join(sandbox, `probe-${randomBytes(3).toString('hex')}.sh`);
  writeFileSync(script, sandboxScript(pod, sandbox, caps, [process.execPath, '-e', code]));
  const out = execFileSync('unshare', ['--mount', '--propagation', 'private', 'bash', script], {
    encoding: 'utf8',
    env: { ...process.env, NODE_OPTIONS: '' },
  });
  return JSON.parse(out) as Record<string, string>;
}

const skip = skipReason();

describe('the DaemonSet pod, reproduced with a mount namespace and setpriv', { skip }, () => {
  let pod: Pod;
  let sandbox: string;
  let monitors: string[];

  before(() => {
    ensureBuilt();
    pod = renderedPod();
    sandbox = mkdtempSync(join(tmpdir(), 'npd-pod-'));
    chmodSync(sandbox, 0o755);
    execFileSync('mkdir', ['-p', join(sandbox, 'config')]);
    for (const [file, text] of Object.entries(pod.configData))
      writeFileSync(join(sandbox, 'config', file), text);
    const configured = pod.args
      .filter((a) => a.startsWith('--config.'))
      .flatMap((a) => a.slice(a.indexOf('=') + 1).split(','))
      .map((f) => f.slice('/config/'.length));
    monitors = configured.map((f) => {
      const m = /^source:\s*(\S+)/m.exec(pod.configData[f] ?? '');
      assert.ok(m, `${f} has a source`);
      return m[1]!;
    });
  });

  after(() => {
    if (sandbox) rmSync(sandbox, { recursive: true, force: true });
  });

  test('the pod drops every capability but the ones it adds', () => {
    assert.deepEqual(pod.caps.drop, ['ALL']);
    assert.equal(pod.runAsUser, 0);
  });

  test('with only the pod capabilities every configured monitor is healthy and detects a kernel line', async () => {
    const marker = `npdpod${randomBytes(5).toString('hex')}`;
    const reason = `Marker${marker}`;
    const markerConfig = join(sandbox, 'config', `${marker}.yaml`);
    writeFileSync(
      markerConfig,
      [
        'plugin: kmsg',
        `source: ${marker}`,
        'rules:',
        '  - type: temporary',
        `    reason: ${reason}`,
        `    pattern: '${marker}: test line \\d+'`,
      ].join('\n'),
    );
    const agent = await runAgentInSandbox(pod, sandbox, pod.caps.add, markerConfig);
    try {
      for (const source of [...monitors, marker]) {
        await waitFor(
          async () => (await metricValue(agent.metricsUrl, `npd_monitor_healthy{source="${source}"}`)) === 1,
          20_000,
          agent.output,
        );
      }
      const health = await fetch(`${agent.statusUrl}/healthz`);
      assert.equal(health.status, 200, await health.text());
      writeFileSync('/dev/kmsg', `${marker}: test line 42\n`);
      await waitFor(
        async () => (await metricValue(agent.metricsUrl, `problem_counter{reason="${reason}"}`)) === 1,
        20_000,
        agent.output,
      );
      // Every enabled built-in probe ran (first runs are splayed) and reached a verdict with these mounts.
      for (const [source, probe] of enabledProbes(pod)) {
        const series = `{source="${source}",probe="${probe}"}`;
        await waitFor(
          async () =>
            ((await metricValue(agent.metricsUrl, `npd_probe_duration_seconds_count${series}`)) ?? 0) >= 1,
          30_000,
          agent.output,
        );
        assert.equal(
          await metricValue(agent.metricsUrl, `npd_probe_errors_total${series}`),
          0,
          `${probe} errors`,
        );
      }
    } finally {
      await agent.stop();
    }
  });

  test('without SYSLOG the kernel monitors cannot read /dev/kmsg (kernel.dmesg_restrict=1)', {
    skip: dmesgRestricted() ? false : 'kernel.dmesg_restrict is 0 here',
  }, async () => {
    const caps = pod.caps.add.filter((c) => c !== 'SYSLOG');
    const agent = await runAgentInSandbox(pod, sandbox, caps);
    try {
      await waitFor(
        async () =>
          (await metricValue(agent.metricsUrl, 'npd_monitor_healthy{source="kernel-monitor"}')) === 0,
        20_000,
        agent.output,
      );
    } finally {
      await agent.stop();
    }
  });

  test('uid 0 with the pod capabilities reads root-owned logs but cannot bypass permissions, ptrace or write', () => {
    const foreign = join(sandbox, 'foreign-0600');
    writeFileSync(foreign, 'secret');
    chownSync(foreign, 1000, 1000);
    chmodSync(foreign, 0o600);
    const own = join(sandbox, 'own-0600');
    writeFileSync(own, 'mine');
    chmodSync(own, 0o600);
    const host = join(sandbox, 'host');
    const code = `
      const fs = require('node:fs');
      const r = {};
      const tryIt = (k, f) => { try { f(); r[k] = 'ok'; } catch (e) { r[k] = e.code; } };
      tryIt('kmsg', () => fs.closeSync(fs.openSync(${JSON.stringify(join(host, 'dev/kmsg'))}, 'r')));
      tryIt('ownFile', () => fs.readFileSync(${JSON.stringify(own)}));
      tryIt('foreignFile', () => fs.readFileSync(${JSON.stringify(foreign)}));
      tryIt('hostInitEnviron', () => fs.readFileSync(${JSON.stringify(join(host, 'proc/1/environ'))}));
      tryIt('hostInitRoot', () => fs.readdirSync(${JSON.stringify(join(host, 'proc/1/root'))}));
      tryIt('writeHostLog', () => fs.writeFileSync(${JSON.stringify(join(host, 'var/log', `npd-write-${marker()}`))}, 'x'));
      tryIt('uptime', () => fs.readFileSync(${JSON.stringify(join(host, 'proc/uptime'))}));
      r.capEff = /CapEff:\\s*(\\w+)/.exec(fs.readFileSync('/proc/self/status', 'utf8'))[1];
      r.uid = String(process.getuid());
      process.stdout.write(JSON.stringify(r));
    `;
    const r = probeInSandbox(pod, sandbox, pod.caps.add, code);
    assert.deepEqual(r, {
      kmsg: 'ok',
      ownFile: 'ok',
      foreignFile: 'EACCES',
      hostInitEnviron: 'EACCES',
      hostInitRoot: 'EACCES',
      writeHostLog: 'EROFS',
      uptime: 'ok',
      capEff: capMask(pod.caps.add),
      uid: '0',
    });
  });
});

/** [source, probe name] of every enabled probe in the probe-monitor configs the pod runs. */
function enabledProbes(pod: Pod): [string, string][] {
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

/** Capability numbers from linux/capability.h, for the names a pod spec may add here. */
const CAP_BITS: Record<string, number> = {
  DAC_READ_SEARCH: 2,
  NET_ADMIN: 12,
  NET_RAW: 13,
  SYS_PTRACE: 19,
  SYS_ADMIN: 21,
  SYSLOG: 34,
};

/** /proc/self/status CapEff for a set of capability names. */
function capMask(names: readonly string[]): string {
  let mask = 0n;
  for (const n of names) {
    const bit = CAP_BITS[n];
    assert.ok(bit !== undefined, `capability ${n} is not in CAP_BITS`);
    mask |= 1n << BigInt(bit);
  }
  return mask.toString(16).padStart(16, '0');
}

function marker(): string {
  return randomBytes(4).toString('hex');
}
