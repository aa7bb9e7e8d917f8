/**
 * The real proof of issue 16: the built image (test/container/build-image.sh) run under podman as the
 * DaemonSet runs it (test/container/pod.ts), with NPD's memory limit (80 MiB, swap the same so it cannot
 * swap) and the DaemonSet's own CPU limit (resources.limits.cpu of `kubectl kustomize deploy/base`),
 * reporting with a real ServiceAccount token to the real kube-apiserver of the e2e harness, through
 *   idle   `idleSeconds` with nothing written by this bench,
 *   flood  `rate` lines/s of the kernel corpus into /dev/kmsg for `floodSeconds`,
 *   storm  `stormLines` distinct lines that a rule added to kernel.yaml turns into Warning events,
 * printing per phase and overall what container-watch.ts reads. The whole bench holds
 * /tmp/kmsg-bench.lock (run.ts, bench-lock.ts), which every /dev/kmsg flood on the machine takes, so the
 * idle phase is idle and the flood is the only one. Asserts nothing: an OOM kill or a /healthz failure is a measured result.
 */
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { launchPod, type Pod, serviceAccountDir } from '../container/pod.ts';
import { containerSkip, IMAGE, inspectState } from '../container/podman.ts';
import { agentContainer, type Doc, one, renderBase } from '../deploy/support.ts';
import { type ControlPlane, startControlPlane } from '../e2e/harness/controlplane.ts';
import { sleep } from '../e2e/harness/processes.ts';
import { REPO } from '../support/agent-process.ts';
import { type Cgroup, cgroupOf, readCgroup } from './cgroup.ts';
import { delta, type Limits, printSpan, SERVICE_ACCOUNT_USER } from './container-report.ts';
import { ContainerWatch } from './container-watch.ts';
import { withMarkerRule } from './kmsg-flood.bench.ts';
import { runWriter } from './kmsg-writer.ts';
import { printEventWrites, settle } from './storm.bench.ts';

export interface ContainerOptions {
  readonly idleSeconds: number;
  readonly floodSeconds: number;
  readonly rate: number;
  readonly stormLines: number;
  readonly stormSeconds: number;
  readonly memoryMiB: number;
}

const REASON = 'ContainerStorm';
const SOURCE = 'kernel-monitor';

/** deploy/base with a temporary rule for the storm's marked lines appended to kernel.yaml. */
function benchDocs(marker: string): Doc[] {
  const docs = renderBase();
  const cm = docs.find((d) => d.kind === 'ConfigMap' && (d.data as Record<string, string>)?.['kernel.yaml']);
  assert.ok(cm, 'deploy/base has a ConfigMap with kernel.yaml');
  const data = cm.data as Record<string, string>;
  data['kernel.yaml'] = withMarkerRule(data['kernel.yaml'] as string, marker, REASON);
  return docs;
}

/** A Kubernetes CPU quantity ("200m", "1", "0.5") in cores. */
export function cpuCores(quantity: string): number {
  const m = /^(\d+(?:\.\d+)?)(m?)$/.exec(quantity);
  assert.ok(m, `resources.limits.cpu ${quantity}: not a CPU quantity`);
  return m[2] === 'm' ? Number(m[1]) / 1000 : Number(m[1]);
}

function limitFlags(docs: Doc[], memoryMiB: number): { flags: string[]; limits: Limits } {
  const cpu = agentContainer(one(docs, 'DaemonSet')).resources.limits.cpu;
  assert.ok(cpu, 'deploy/base sets resources.limits.cpu');
  const cpus = cpuCores(cpu);
  const flags = [`--memory=${memoryMiB}m`, `--memory-swap=${memoryMiB}m`, `--cpus=${cpus}`];
  return { flags, limits: { memoryBytes: memoryMiB * 1024 * 1024, cpu, cpus } };
}

/** Sleeps `ms`, or less when the container exits. */
async function whileAlive(w: ContainerWatch, ms: number): Promise<void> {
  const until = Date.now() + ms;
  while (Date.now() < until && !w.exited()) await sleep(Math.min(1000, until - Date.now()));
}

interface Run {
  readonly cp: ControlPlane;
  readonly pod: Pod;
  readonly w: ContainerWatch;
  readonly limits: Limits;
  readonly marker: string;
  readonly opts: ContainerOptions;
}

async function idlePhase(r: Run): Promise<void> {
  const b = await r.w.begin();
  await whileAlive(r.w, r.opts.idleSeconds * 1000);
  printSpan(r.cp, await r.w.end('idle', b), r.limits, r.w.agentPid);
}

async function floodPhase(r: Run): Promise<void> {
  const b = await r.w.begin();
  const wr = await runWriter({ rate: r.opts.rate, seconds: r.opts.floodSeconds, marks: 0 }, r.marker);
  await whileAlive(r.w, 3000); // the backlog drains
  printSpan(r.cp, await r.w.end(`flood, ${r.opts.rate} lines/s`, b), r.limits, r.w.agentPid);
  console.log(
    `writer: ${wr.written} lines in ${wr.seconds.toFixed(1)} s = ${wr.achievedRate.toFixed(0)} lines/s, ${wr.writeErrors} write errors`,
  );
}

async function stormPhase(r: Run): Promise<void> {
  const b = await r.w.begin();
  const { stormLines, stormSeconds } = r.opts;
  await runWriter({ rate: 0, seconds: stormSeconds, marks: stormLines }, r.marker);
  let settled = 'settled';
  // The agent's event counters stop moving once it has written (or dropped) the storm.
  await settle({ metricsUrl: r.pod.metrics, output: r.pod.c.output }, SOURCE).catch((err: Error) => {
    settled = `not settled: ${err.message.split('\n')[0]}`;
  });
  const span = await r.w.end(`storm, ${stormLines} lines in ${stormSeconds} s, then ${settled}`, b);
  printSpan(r.cp, span, r.limits, r.w.agentPid);
  const scope = { source: SOURCE, mark: b.from.mark, messageIncludes: r.marker, user: SERVICE_ACCOUNT_USER };
  const d = delta(b.from, span.to);
  await printEventWrites(r.cp, d, scope);
  console.log(`problem_counter{reason="${REASON}"} +${d('problem_counter', `reason="${REASON}"`)}`);
}

async function phases(r: Run): Promise<void> {
  const first = await r.w.snapshot();
  // Before the first phase resets them, the peaks are those of the start-up.
  const startup = { peakBytes: first.cg.peakBytes, hwmKiB: first.hwmKiB };
  console.log(
    `start-up: cgroup memory peak ${(startup.peakBytes / 2 ** 20).toFixed(1)} MiB, agent VmHWM ${(startup.hwmKiB / 1024).toFixed(1)} MiB`,
  );
  await idlePhase(r);
  if (!r.w.exited()) await floodPhase(r);
  if (!r.w.exited()) await stormPhase(r);
  printSpan(r.cp, await r.w.overall(first, startup), r.limits, r.w.agentPid);
  if (r.w.exited()) console.log(`container exited; its last output:\n${r.pod.c.output().slice(-3000)}`);
}

function buildImage(): void {
  execFileSync('bash', [join(REPO, 'test', 'container', 'build-image.sh'), IMAGE], { stdio: 'inherit' });
}

/** The container's cgroup as soon as it has a process; undefined if it exits first. */
async function podCgroup(pod: Pod): Promise<Cgroup | undefined> {
  while (pod.c.child.exitCode === null) {
    try {
      const { pid } = inspectState(pod.c.name);
      if (pid > 0) return cgroupOf(pid);
    } catch {
      // not created yet
    }
    await sleep(100);
  }
  return undefined;
}

/**
 * undefined once /healthz says 200; why not, when the container exits or `ms` pass first. Podman's
 * OOMKilled misses a kill of tini's child, so the cgroup's own count (read until it goes) says it.
 */
async function untilHealthy(pod: Pod, ms: number): Promise<string | undefined> {
  const deadline = Date.now() + ms;
  const cg = await podCgroup(pod);
  let last = 'no answer';
  let reading = '';
  while (Date.now() < deadline) {
    try {
      const r = cg && readCgroup(cg);
      if (r)
        reading = `cgroup: memory peak ${(r.peakBytes / 2 ** 20).toFixed(1)} MiB, oom_kill ${r.oomKills}`;
    } catch {
      // gone with the container: keep the last reading
    }
    if (pod.c.child.exitCode !== null) return `container exited ${pod.c.child.exitCode}; ${reading}`;
    const r = await fetch(`${pod.status}/healthz`).catch(() => undefined);
    if (r?.status === 200) return undefined;
    if (r) last = String(r.status);
    await sleep(200);
  }
  return `no /healthz 200 within ${ms / 1000} s (last ${last}); ${reading}`;
}

/** The pod once its /healthz says 200, or undefined (and why printed) when it exited before that. */
async function startAgent(
  cp: ControlPlane,
  work: string,
  docs: Doc[],
  flags: string[],
): Promise<Pod | undefined> {
  const home = mkdtempSync(join(work, 'home-'));
  const saDir = await serviceAccountDir(cp, home, work);
  const started = Date.now();
  const pod = await launchPod(cp, saDir, work, docs, { flags, keep: true });
  const failed = await untilHealthy(pod, 120_000);
  if (failed !== undefined) {
    const st = inspectState(pod.c.name);
    console.log(
      `start-up failed (${failed}): podman inspect ${st.status}, OOMKilled ${st.oomKilled}, ExitCode ${st.exitCode}, Restarts ${st.restarts}`,
    );
    console.log(`its last output:\n${pod.c.output().slice(-2000)}`);
    pod.c.remove();
    return undefined;
  }
  console.log(
    `container ${pod.c.name}: /healthz 200 ${((Date.now() - started) / 1000).toFixed(1)} s after podman run`,
  );
  return pod;
}

export async function containerBench(opts: ContainerOptions): Promise<void> {
  const skip = containerSkip();
  if (skip) {
    console.log(`## container: skipped (${skip})`);
    return;
  }
  buildImage();
  const marker = `npdct${randomBytes(4).toString('hex')}`;
  const docs = benchDocs(marker);
  const { flags, limits } = limitFlags(docs, opts.memoryMiB);
  console.log(
    `## container: ${IMAGE} under podman ${flags.join(' ')} (the DaemonSet's limits.cpu ${limits.cpu}), idle ${opts.idleSeconds} s, flood ${opts.rate} lines/s for ${opts.floodSeconds} s, storm ${opts.stormLines} lines in ${opts.stormSeconds} s`,
  );
  const cp = await startControlPlane();
  const work = mkdtempSync(join(tmpdir(), 'npd-bench-ct-'));
  let pod: Pod | undefined;
  let w: ContainerWatch | undefined;
  try {
    pod = await startAgent(cp, work, docs, flags);
    if (pod === undefined) return;
    w = ContainerWatch.attach(cp, pod);
    await phases({ cp, pod, w, limits, marker, opts });
  } finally {
    await w?.stop();
    pod?.c.remove();
    await cp.stop();
    rmSync(work, { recursive: true, force: true });
  }
}
