/**
 * One pair's whole life, the way a DaemonSet pod lives it: start-up, an idle stretch (its memory and
 * CPU read after settling), then a steady flood of routine kernel lines (CPU per line), and at the end
 * the peak RSS since the process started (VmHWM, what `ps`, a memory cgroup's max usage and a
 * node-level OOM see), start-up peak included.
 */
import { randomBytes } from 'node:crypto';
import { lastKmsgSeq } from './kmsg-seq.ts';
import { runWriter, type WriterSummary } from './kmsg-writer.ts';
import { type NpdBuild, npdKmsgRestarts } from './npd-go.ts';
import {
  cpuSeconds,
  formatUsage,
  loadNote,
  measure,
  mib,
  statusKiB,
  ticksPerSecond,
  type Usage,
} from './proc.ts';
import { type Pair, rssSplit, standaloneArgs, startPair, stopPair } from './vs-npd-pair.ts';
import type { Row } from './vs-npd-table.ts';

export interface LifeOptions {
  readonly cpuRate: number;
  readonly cpuSeconds: number;
  readonly idleSeconds: number;
  readonly settleSeconds: number;
  /** Seconds from start to the flood: the idle part of the life. */
  readonly lifeIdleSeconds: number;
}

export interface LifeFigures {
  readonly rss: { npd: { anon: number; file: number }; ours: { anon: number; file: number } };
  readonly usage: readonly [Usage, Usage];
  readonly idleLoad: string;
  readonly usPerLine: { npd: number; ours: number };
  readonly kernelLines: number;
  readonly writer: WriterSummary;
  readonly npdRestarts: number;
  /** VmHWM since start, over start-up, the idle stretch and the flood. */
  readonly hwmSinceStart: { npd: number; ours: number };
  readonly load: string;
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** measure() resets VmHWM for its window, so the peak since start is the largest of its readings. */
function peakSinceStart(u: Usage, pid: number): number {
  return Math.max(u.hwmSinceStartKiB, u.hwmKiB, statusKiB(pid, 'VmHWM'));
}

async function flood(pair: Pair, o: LifeOptions) {
  const restarts0 = npdKmsgRestarts(pair.npd.output());
  const [seq0, n0, u0] = [lastKmsgSeq(), cpuSeconds(pair.npd.pid), cpuSeconds(pair.ours.pid)];
  const marker = `npdvs${randomBytes(4).toString('hex')}`;
  const writer = await runWriter({ rate: o.cpuRate, seconds: o.cpuSeconds, marks: 0 }, marker);
  await sleep(2000);
  const kernelLines = lastKmsgSeq() - seq0;
  const per = (cpu: number) => (cpu / Math.max(1, kernelLines)) * 1e6;
  const usPerLine = { npd: per(cpuSeconds(pair.npd.pid) - n0), ours: per(cpuSeconds(pair.ours.pid) - u0) };
  return { usPerLine, kernelLines, writer, npdRestarts: npdKmsgRestarts(pair.npd.output()) - restarts0 };
}

export async function life(build: NpdBuild, o: LifeOptions): Promise<LifeFigures> {
  const started = Date.now();
  const pair = await startPair(build, { npd: standaloneArgs(build), ours: standaloneArgs(build) });
  try {
    await sleep(o.settleSeconds * 1000);
    const rss = { npd: rssSplit(pair.npd.pid), ours: rssSplit(pair.ours.pid) };
    const ms = o.idleSeconds * 1000;
    const usage = await Promise.all([measure(pair.npd.pid, ms), measure(pair.ours.pid, ms)]);
    const idleLoad = loadNote();
    await sleep(Math.max(0, started + o.lifeIdleSeconds * 1000 - Date.now()));
    const f = await flood(pair, o);
    const hwmSinceStart = {
      npd: peakSinceStart(usage[0], pair.npd.pid),
      ours: peakSinceStart(usage[1], pair.ours.pid),
    };
    return { rss, usage, idleLoad, ...f, hwmSinceStart, load: loadNote() };
  } finally {
    await stopPair(pair);
  }
}

export function printLife(f: LifeFigures, o: LifeOptions): void {
  console.log(`## Idle (settled ${o.settleSeconds} s, then ${o.idleSeconds} s)`);
  console.log(`NPD:        ${formatUsage(f.usage[0])}`);
  console.log(`this agent: ${formatUsage(f.usage[1])}`);
  console.log(
    `## ${o.lifeIdleSeconds} s after start, a flood: writer ${f.writer.written} routine lines at ${f.writer.achievedRate.toFixed(0)} lines/s; kernel logged ${f.kernelLines}; NPD kmsg reader restarts ${f.npdRestarts} (${f.load})`,
  );
  console.log(
    `  VmHWM since start: NPD ${mib(f.hwmSinceStart.npd)}, this agent ${mib(f.hwmSinceStart.ours)}`,
  );
}

export function lifeRows(f: LifeFigures, o: LifeOptions): Row[] {
  const { rss, usage, idleLoad } = f;
  // /proc counts CPU in ticks: no tick at all in the window means less than one tick's worth.
  const tick = 1000 / ticksPerSecond() / o.idleSeconds;
  const noTick = (u: Usage) =>
    u.cpuSeconds === 0 ? `no CPU tick in ${o.idleSeconds} s: < ${tick.toFixed(2)}` : undefined;
  const idleRss: Row = {
    label: 'idle VmRSS (RssAnon + RssFile)',
    npd: [rss.npd.anon + rss.npd.file],
    ours: [rss.ours.anon + rss.ours.file],
    format: mib,
    npdNote: `${mib(rss.npd.anon)} + ${mib(rss.npd.file)}`,
    oursNote: `${mib(rss.ours.anon)} + ${mib(rss.ours.file)}`,
    load: idleLoad,
  };
  const idleCpu: Row = {
    label: `idle CPU over ${o.idleSeconds} s`,
    npd: [usage[0].millicores],
    ours: [usage[1].millicores],
    format: (v) => `${v.toFixed(1)} millicores`,
    npdNote: noTick(usage[0]),
    oursNote: noTick(usage[1]),
    load: idleLoad,
  };
  return [idleRss, idleCpu];
}

export function lifeCpuRow(f: LifeFigures, o: LifeOptions): Row {
  return {
    label: `CPU per kernel line, ${o.cpuRate} lines/s for ${o.cpuSeconds} s`,
    npd: [f.usPerLine.npd],
    ours: [f.usPerLine.ours],
    format: (v) => `${v.toFixed(1)} µs`,
    load: f.load,
  };
}

export function lifePeakRow(f: LifeFigures, o: LifeOptions): Row {
  return {
    label: `VmHWM since start: start-up + ${o.lifeIdleSeconds / 60} min idle + ${o.cpuSeconds} s at ${o.cpuRate / 1000}k lines/s`,
    npd: [f.hwmSinceStart.npd],
    ours: [f.hwmSinceStart.ours],
    format: mib,
    load: f.load,
  };
}
