/**
 * This agent beside the real NPD v1.36.0 (built once by test/tools/npd/build.sh), both running at once
 * on the same /dev/kmsg with NPD's own config/kernel-monitor.json, unchanged. Prints what each costs
 * (CPU per kernel line, idle memory and CPU, peak memory under a flood and an event storm, start-up to
 * first /metrics) and what each detects under a flood: marked lines that NPD's shipped OOMKilling rule
 * matches, counted by each one's problem_counter. Ends with one markdown table; asserts nothing.
 * Runs under the kmsg lock (run.ts takes it).
 */
import { randomBytes } from 'node:crypto';
import { lastKmsgSeq } from './kmsg-seq.ts';
import { runWriter, type WriterSummary } from './kmsg-writer.ts';
import { type NpdBuild, npdBuild, npdKmsgRestarts } from './npd-go.ts';
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
import {
  MARK_REASON,
  markedInLog,
  type Pair,
  pairDelta,
  rssSplit,
  scrapePair,
  standaloneArgs,
  startPair,
  startupTimes,
  stopPair,
} from './vs-npd-pair.ts';
import { type StormFigures, stormSideBySide } from './vs-npd-storm.ts';
import { median, percent, type Row, renderTable } from './vs-npd-table.ts';

export interface VsNpdOptions {
  /** Flood rates in lines/s, each a short run with a fresh pair. */
  readonly rates: readonly number[];
  /** Seconds per flood rate. */
  readonly seconds: number;
  /** Marked lines per flood run. */
  readonly marks: number;
  readonly cpuRate: number;
  readonly cpuSeconds: number;
  readonly idleSeconds: number;
  readonly settleSeconds: number;
  /** Start-ups per side for the median. */
  readonly runs: number;
  readonly stormLines: number;
  readonly stormSeconds: number;
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const newMarker = () => `npdvs${randomBytes(4).toString('hex')}`;
const both = (pair: Pair, ms: number) => Promise.all([measure(pair.npd.pid, ms), measure(pair.ours.pid, ms)]);

interface IdleFigures {
  readonly rss: { npd: { anon: number; file: number }; ours: { anon: number; file: number } };
  readonly usage: readonly [Usage, Usage];
  readonly load: string;
}

interface CpuFigures {
  readonly usPerLine: { npd: number; ours: number };
  readonly kernelLines: number;
  readonly writer: WriterSummary;
  readonly npdRestarts: number;
  readonly load: string;
}

async function idle(pair: Pair, o: VsNpdOptions): Promise<IdleFigures> {
  await sleep(o.settleSeconds * 1000);
  const rss = { npd: rssSplit(pair.npd.pid), ours: rssSplit(pair.ours.pid) };
  const usage = await both(pair, o.idleSeconds * 1000);
  return { rss, usage, load: loadNote() };
}

/** CPU time each spent per record the kernel logged while a steady writer ran (routine lines only). */
async function cpuPerLine(pair: Pair, o: VsNpdOptions): Promise<CpuFigures> {
  const restarts0 = npdKmsgRestarts(pair.npd.output());
  const [seq0, n0, u0] = [lastKmsgSeq(), cpuSeconds(pair.npd.pid), cpuSeconds(pair.ours.pid)];
  const writer = await runWriter({ rate: o.cpuRate, seconds: o.cpuSeconds, marks: 0 }, newMarker());
  await sleep(2000);
  const kernelLines = lastKmsgSeq() - seq0;
  const per = (cpu: number) => (cpu / Math.max(1, kernelLines)) * 1e6;
  return {
    usPerLine: { npd: per(cpuSeconds(pair.npd.pid) - n0), ours: per(cpuSeconds(pair.ours.pid) - u0) },
    kernelLines,
    writer,
    npdRestarts: npdKmsgRestarts(pair.npd.output()) - restarts0,
    load: loadNote(),
  };
}

interface FloodFigures {
  readonly rate: number;
  readonly writer: WriterSummary;
  readonly kernelLines: number;
  readonly counted: { npd: number; ours: number };
  readonly inLog: { npd: number; ours: number };
  readonly oursRead: number;
  readonly oursLost: number;
  readonly npdRestarts: number;
  readonly hwm: { npd: number; ours: number };
  readonly usage: readonly [Usage, Usage];
  readonly load: string;
}

/** One flood rate with a fresh pair, so a reader that died at one rate does not carry over. */
async function flood(build: NpdBuild, rate: number, o: VsNpdOptions): Promise<FloodFigures> {
  const pair = await startPair(build, { npd: standaloneArgs(build), ours: standaloneArgs(build) });
  try {
    // kernel-monitor.json looks back 5 minutes: let both replay the ring before the first reading.
    await sleep(5000);
    const marker = newMarker();
    const [m0, seq0, restarts0] = [await scrapePair(pair), lastKmsgSeq(), npdKmsgRestarts(pair.npd.output())];
    const run = runWriter({ rate, seconds: o.seconds, marks: o.marks, shape: 'oom-kill' }, marker);
    const usage = await both(pair, o.seconds * 1000);
    const writer = await run;
    await sleep(3000);
    const [m1, seq1] = [await scrapePair(pair), lastKmsgSeq()];
    const src = 'source="kernel-monitor"';
    return {
      rate,
      writer,
      kernelLines: seq1 - seq0,
      counted: pairDelta(m0, m1, 'problem_counter', `reason="${MARK_REASON}"`),
      inLog: { npd: markedInLog(pair.npd.output(), marker), ours: markedInLog(pair.ours.output(), marker) },
      oursRead: pairDelta(m0, m1, 'npd_log_lines_read_total', src).ours,
      oursLost: pairDelta(m0, m1, 'npd_kmsg_records_lost_total', src).ours,
      npdRestarts: npdKmsgRestarts(pair.npd.output()) - restarts0,
      hwm: { npd: statusKiB(pair.npd.pid, 'VmHWM'), ours: statusKiB(pair.ours.pid, 'VmHWM') },
      usage,
      load: loadNote(),
    };
  } finally {
    await stopPair(pair);
  }
}

function printIdle(f: IdleFigures, o: VsNpdOptions, c: CpuFigures): void {
  console.log(`## Idle (settled ${o.settleSeconds} s, then ${o.idleSeconds} s) and CPU per kernel line`);
  console.log(`NPD:        ${formatUsage(f.usage[0])}`);
  console.log(`this agent: ${formatUsage(f.usage[1])}`);
  console.log(
    `writer ${c.writer.written} routine lines at ${c.writer.achievedRate.toFixed(0)} lines/s; kernel logged ${c.kernelLines}; NPD kmsg reader restarts ${c.npdRestarts} (${c.load})`,
  );
}

function printFlood(f: FloodFigures): void {
  const w = f.writer;
  console.log(
    `## Flood ${f.rate} lines/s: writer ${w.written} lines (${w.marks} marked) at ${w.achievedRate.toFixed(0)} lines/s, ${w.writeErrors} write errors; kernel logged ${f.kernelLines}`,
  );
  console.log(
    `  NPD:        problem_counter{reason="${MARK_REASON}"} +${f.counted.npd}, distinct marked lines in its log ${f.inLog.npd}, kmsg reader restarts ${f.npdRestarts}; ${formatUsage(f.usage[0])}`,
  );
  console.log(
    `  this agent: problem_counter{reason="${MARK_REASON}"} +${f.counted.ours}, distinct marked lines in its log ${f.inLog.ours}, read ${f.oursRead}, lost (counted) ${f.oursLost}, read+lost ${f.oursRead + f.oursLost}; ${formatUsage(f.usage[1])}`,
  );
}

interface Figures {
  readonly startup: { npd: number[]; ours: number[]; load: string };
  readonly idle: IdleFigures;
  readonly cpu: CpuFigures;
  readonly floods: readonly FloodFigures[];
  readonly storm: StormFigures | Error;
}

function floodRows(f: Figures, o: VsNpdOptions): Row[] {
  const detected = (side: 'npd' | 'ours') =>
    f.floods.map((x) => x.counted[side] / Math.max(1, x.writer.marks));
  const worst = f.floods.reduce<FloodFigures | undefined>(
    (a, b) => (a && a.hwm.ours >= b.hwm.ours ? a : b),
    undefined,
  );
  const storm = f.storm instanceof Error ? undefined : f.storm;
  return [
    {
      label: `marked lines detected at ${o.rates.map((r) => `${r / 1000}k`).join(' / ')} lines/s`,
      npd: detected('npd'),
      ours: detected('ours'),
      format: percent,
      npdNote: `kmsg reader restarts ${f.floods.map((x) => x.npdRestarts).join(' / ')}`,
      oursNote: `records lost, counted ${f.floods.map((x) => x.oursLost).join(' / ')}`,
      load: f.floods.at(-1)?.load ?? '',
    },
    {
      label: `peak RSS (VmHWM reset as each window starts) under flood (${worst?.rate ?? '?'} lines/s) / under an event storm`,
      npd: [worst?.hwm.npd ?? Number.NaN, storm?.hwm.npd ?? Number.NaN],
      ours: [worst?.hwm.ours ?? Number.NaN, storm?.hwm.ours ?? Number.NaN],
      format: mib,
      load: storm?.load ?? worst?.load ?? '',
    },
  ];
}

function idleRows(f: Figures, o: VsNpdOptions): Row[] {
  const { rss, usage, load } = f.idle;
  // /proc counts CPU in ticks: no tick at all in the window means less than one tick's worth.
  const tick = 1000 / ticksPerSecond() / o.idleSeconds;
  const noTick = (u: Usage) =>
    u.cpuSeconds === 0 ? `no CPU tick in ${o.idleSeconds} s: < ${tick.toFixed(2)}` : undefined;
  return [
    {
      label: 'idle VmRSS (RssAnon + RssFile)',
      npd: [rss.npd.anon + rss.npd.file],
      ours: [rss.ours.anon + rss.ours.file],
      format: mib,
      npdNote: `${mib(rss.npd.anon)} + ${mib(rss.npd.file)}`,
      oursNote: `${mib(rss.ours.anon)} + ${mib(rss.ours.file)}`,
      load,
    },
    {
      label: `idle CPU over ${o.idleSeconds} s`,
      npd: [usage[0].millicores],
      ours: [usage[1].millicores],
      format: (v) => `${v.toFixed(1)} millicores`,
      npdNote: noTick(usage[0]),
      oursNote: noTick(usage[1]),
      load,
    },
  ];
}

function rows(f: Figures, o: VsNpdOptions): Row[] {
  const cpu: Row = {
    label: `CPU per kernel line, ${o.cpuRate} lines/s`,
    npd: [f.cpu.usPerLine.npd],
    ours: [f.cpu.usPerLine.ours],
    format: (v) => `${v.toFixed(1)} µs`,
    load: f.cpu.load,
  };
  const startup: Row = {
    label: `start-up to first /metrics (median of ${o.runs})`,
    npd: [median(f.startup.npd)],
    ours: [median(f.startup.ours)],
    format: (v) => `${v.toFixed(0)} ms`,
    load: f.startup.load,
  };
  const [detection, hwm] = floodRows(f, o) as [Row, Row];
  return [cpu, detection, ...idleRows(f, o), hwm, startup];
}

/** The idle window, then the steady writer, on one pair. */
async function idleThenCpu(build: NpdBuild, o: VsNpdOptions): Promise<[IdleFigures, CpuFigures]> {
  const pair = await startPair(build, { npd: standaloneArgs(build), ours: standaloneArgs(build) });
  try {
    const i = await idle(pair, o);
    return [i, await cpuPerLine(pair, o)];
  } finally {
    await stopPair(pair);
  }
}

export async function vsNpdBench(o: VsNpdOptions): Promise<void> {
  const build = npdBuild();
  console.log(`NPD ${build.binary}; both read /dev/kmsg with ${build.source}/config/kernel-monitor.json`);
  const startup = { ...(await startupTimes(build, o.runs)), load: loadNote() };
  console.log(`## Start-up to first /metrics (ms): NPD ${startup.npd.map((v) => v.toFixed(0)).join(', ')}`);
  console.log(`  this agent ${startup.ours.map((v) => v.toFixed(0)).join(', ')} (${startup.load})`);
  const [idleF, cpu] = await idleThenCpu(build, o);
  printIdle(idleF, o, cpu);
  const floods: FloodFigures[] = [];
  for (const rate of o.rates) {
    floods.push(await flood(build, rate, o));
    printFlood(floods.at(-1) as FloodFigures);
  }
  const storm = await stormSideBySide(build, o).catch((err: unknown) => err as Error);
  if (storm instanceof Error) console.log(`## Event storm: not measured: ${storm.message}`);
  console.log(`\n## NPD v1.36.0 vs this agent, same /dev/kmsg, NPD's kernel-monitor.json unchanged\n`);
  console.log(renderTable(rows({ startup, idle: idleF, cpu, floods, storm }, o)));
}
