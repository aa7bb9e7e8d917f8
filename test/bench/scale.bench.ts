/**
 * Scale model: `nodes` node identities in one process against a real kube-apiserver (see scale-fleet.ts),
 * measured from the apiserver's audit log. Phases: start-up, steady state (heartbeat shortened to
 * `heartbeatSeconds` and scaled back to the 5 min default), and a correlated failure where every node
 * hits the same kernel error at once and the line repeats every 10 s for a minute. Extrapolated to
 * 5,000 nodes and compared with NPD (npd.md §4.4, §8).
 */
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pino from 'pino';
import { createRegistry } from '../../src/core/metrics.ts';
import {
  AGENT_USER,
  type AuditEvent,
  type AuditMark,
  type ControlPlane,
  startControlPlane,
} from '../e2e/harness/controlplane.ts';
import { cpuSeconds, loadNote } from './proc.ts';
import { createNodes, hitKernelError, type Identity, startFleet, stopFleet } from './scale-fleet.ts';

export interface ScaleOptions {
  readonly nodes: number;
  readonly heartbeatSeconds: number;
}

const STEADY_MS = 60_000;
const FAILURE_MS = 60_000;
const REPEAT_MS = 10_000;
const DEFAULT_HEARTBEAT_S = 300;
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

function key(e: AuditEvent): string {
  const o = e.objectRef ?? {};
  return `${e.verb} ${o.resource ?? '?'}${o.subresource ? `/${o.subresource}` : ''}`;
}

function tally(events: readonly AuditEvent[]): Map<string, number> {
  const out = new Map<string, number>();
  for (const e of events) out.set(key(e), (out.get(key(e)) ?? 0) + 1);
  return new Map([...out].sort());
}

/** Requests per wall-clock second, by the apiserver's receive time: the busiest second. */
function peakPerSecond(events: readonly AuditEvent[]): number {
  const per = new Map<number, number>();
  for (const e of events) {
    const s = Math.floor(Date.parse(e.requestReceivedTimestamp ?? '') / 1000);
    per.set(s, (per.get(s) ?? 0) + 1);
  }
  return Math.max(0, ...per.values());
}

interface Window {
  readonly label: string;
  readonly events: AuditEvent[];
  readonly seconds: number;
  readonly apiserverCpu: number;
  readonly benchCpu: number;
}

async function window(
  cp: ControlPlane,
  label: string,
  ms: number,
  during?: () => Promise<void>,
): Promise<Window> {
  const mark: AuditMark = cp.auditMark();
  const apiPid = cp.pids().apiserver as number;
  const [api0, bench0, t0] = [cpuSeconds(apiPid), process.cpuUsage(), Date.now()];
  await Promise.all([sleep(ms), during?.()]);
  const events = cp.auditEvents({ user: AGENT_USER }, mark);
  const used = process.cpuUsage(bench0);
  return {
    label,
    events,
    seconds: (Date.now() - t0) / 1000,
    apiserverCpu: cpuSeconds(apiPid) - api0,
    benchCpu: (used.user + used.system) / 1e6,
  };
}

function printWindow(w: Window, nodes: number): void {
  const perNodeMin = (n: number) => (n / nodes / (w.seconds / 60)).toFixed(3);
  console.log(
    `${w.label}: ${w.events.length} requests in ${w.seconds.toFixed(0)} s from ${nodes} nodes = ${perNodeMin(w.events.length)} per node per minute; busiest second ${peakPerSecond(w.events)} requests; apiserver CPU ${w.apiserverCpu.toFixed(1)} s, this process ${w.benchCpu.toFixed(1)} s (${loadNote()})`,
  );
  for (const [k, n] of tally(w.events))
    console.log(`    ${k.padEnd(28)} ${String(n).padStart(6)}  (${perNodeMin(n)} per node per minute)`);
}

/** Per node, seconds from the failure to its first nodes/status PATCH after it. */
function timeToCondition(w: Window, t0: number): string {
  const first = new Map<string, number>();
  for (const e of w.events) {
    const name = e.objectRef?.name;
    if (e.objectRef?.subresource !== 'status' || !name || first.has(name)) continue;
    first.set(name, (Date.parse(e.requestReceivedTimestamp ?? '') - t0) / 1000);
  }
  const s = [...first.values()].sort((a, b) => a - b);
  const q = (p: number) => (s[Math.min(s.length - 1, Math.floor(p * s.length))] ?? Number.NaN).toFixed(2);
  return `${s.length} nodes patched; seconds to the PATCH p50 ${q(0.5)}, p95 ${q(0.95)}, max ${q(1)}`;
}

async function failure(fleet: readonly Identity[]): Promise<void> {
  for (const n of fleet) hitKernelError(n, true);
  for (let t = REPEAT_MS; t < FAILURE_MS; t += REPEAT_MS) {
    await sleep(REPEAT_MS);
    for (const n of fleet) hitKernelError(n, false);
  }
}

function extrapolate(steady: Window, fail: Window, nodes: number, hb: number): void {
  const patches = steady.events.filter((e) => e.objectRef?.subresource === 'status').length;
  const perHeartbeat = patches / nodes / (steady.seconds / hb);
  const steadyPerNodeMin = perHeartbeat / (DEFAULT_HEARTBEAT_S / 60);
  const failPerNode = fail.events.length / nodes;
  console.log('Extrapolation (writes scale linearly with nodes; every node talks only about itself):');
  console.log(
    `  steady: ${perHeartbeat.toFixed(3)} status PATCH per node per heartbeat period (measured at ${hb} s); at the 5 min default ${steadyPerNodeMin.toFixed(3)} per node per minute -> 5,000 nodes: ${((5000 * steadyPerNodeMin) / 60).toFixed(1)} QPS`,
  );
  console.log(
    `  correlated failure: ${failPerNode.toFixed(2)} requests per node in the failure minute -> 5,000 nodes: ${(5000 * failPerNode).toFixed(0)} requests, ${((5000 * failPerNode) / fail.seconds).toFixed(0)} QPS averaged over the minute; busiest second scaled ${(peakPerSecond(fail.events) * (5000 / nodes)).toFixed(0)} QPS`,
  );
  console.log(
    '  NPD: the same 1 PATCH per node per 5 min heartbeat (npd.md §4.4) = 16.7 QPS at 5,000 nodes; issue #124 (2017, before the 5 min default): ~3k QPS of ~11k total apiserver QPS at 4k nodes',
  );
}

async function steadyPhase(cp: ControlPlane, opts: ScaleOptions, logger: pino.Logger): Promise<Window> {
  let fleet: Identity[] = [];
  try {
    const startup = await window(
      cp,
      `start-up, heartbeat ${opts.heartbeatSeconds} s (first 30 s)`,
      30_000,
      async () => {
        fleet = await startFleet({ ...opts, cp, registry: createRegistry(), logger });
      },
    );
    printWindow(startup, opts.nodes);
    const steady = await window(
      cp,
      `steady state, heartbeat ${opts.heartbeatSeconds} s (${STEADY_MS / 1000} s)`,
      STEADY_MS,
    );
    printWindow(steady, opts.nodes);
    return steady;
  } finally {
    await stopFleet(fleet);
  }
}

/**
 * A fresh fleet on the default 5 min heartbeat, so no heartbeat falls in the failure minute and the
 * writes the failure causes (including the event-watermark annotation syncs, which a short heartbeat
 * would hide by merging them) are seen alone.
 */
async function failurePhase(cp: ControlPlane, opts: ScaleOptions, logger: pino.Logger): Promise<Window> {
  let fleet: Identity[] = [];
  try {
    const restart = await window(
      cp,
      'restart on the default 5 min heartbeat (first 30 s)',
      30_000,
      async () => {
        fleet = await startFleet({
          ...opts,
          heartbeatSeconds: DEFAULT_HEARTBEAT_S,
          cp,
          registry: createRegistry(),
          logger,
        });
      },
    );
    printWindow(restart, opts.nodes);
    const t0 = Date.now();
    const label = 'correlated failure: every node, same error at once, the line repeats every 10 s (65 s)';
    const fail = await window(cp, label, FAILURE_MS + 5000, () => failure(fleet));
    printWindow(fail, opts.nodes);
    console.log(`  ${timeToCondition(fail, t0)}`);
    return fail;
  } finally {
    await stopFleet(fleet);
  }
}

export async function scaleBench(opts: ScaleOptions): Promise<void> {
  const cp = await startControlPlane();
  const logFile = join(mkdtempSync(join(tmpdir(), 'npd-bench-scale-')), 'fleet.log');
  const logger = pino({ level: 'warn' }, pino.destination({ dest: logFile, sync: true }));
  try {
    await createNodes(cp, opts.nodes);
    console.log(`## Scale model: ${opts.nodes} node identities in one process`);
    const steady = await steadyPhase(cp, opts, logger);
    const fail = await failurePhase(cp, opts, logger);
    extrapolate(steady, fail, opts.nodes, opts.heartbeatSeconds);
    console.log(`  (agent warnings and errors: ${logFile})`);
  } finally {
    await cp.stop();
  }
}
