/**
 * This agent beside the real NPD v1.36.0 (built once by test/tools/npd/build.sh), both running at once
 * on the same /dev/kmsg with NPD's own config/kernel-monitor.json, unchanged. Prints what each costs
 * (start-up to first /metrics; a whole life of start-up, idle and a steady flood: idle memory and CPU,
 * CPU per kernel line, the peak RSS since start; peak memory under floods and an event storm; API
 * writes in a correlated failure) and what each detects under a flood: marked lines that NPD's
 * shipped OOMKilling rule matches, counted by each one's problem_counter. Ends with one markdown
 * table; asserts nothing. Runs under the kmsg lock (run.ts takes it).
 */
import { randomBytes } from 'node:crypto';
import { lastKmsgSeq } from './kmsg-seq.ts';
import { runWriter, type WriterSummary } from './kmsg-writer.ts';
import { type NpdBuild, npdBuild, npdKmsgRestarts } from './npd-go.ts';
import { formatUsage, loadNote, measure, mib, statusKiB, type Usage } from './proc.ts';
import { type FailureFigures, failureSideBySide } from './vs-npd-failure.ts';
import {
  type LifeFigures,
  type LifeOptions,
  life,
  lifeCpuRow,
  lifePeakRow,
  lifeRows,
  printLife,
} from './vs-npd-life.ts';
import {
  MARK_REASON,
  markedInLog,
  type Pair,
  pairDelta,
  type StartupTimes,
  scrapePair,
  standaloneArgs,
  startPair,
  startupTimes,
  stopPair,
} from './vs-npd-pair.ts';
import { type StormFigures, stormSideBySide } from './vs-npd-storm.ts';
import { median, percent, type Row, renderTable } from './vs-npd-table.ts';

export interface VsNpdOptions extends LifeOptions {
  /** Flood rates in lines/s, each a short run with a fresh pair. */
  readonly rates: readonly number[];
  /** Seconds per flood rate. */
  readonly seconds: number;
  /** Marked lines per flood run. */
  readonly marks: number;
  /** Start-ups per side for the median. */
  readonly runs: number;
  readonly stormLines: number;
  readonly stormSeconds: number;
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const newMarker = () => `npdvs${randomBytes(4).toString('hex')}`;
const both = (pair: Pair, ms: number) => Promise.all([measure(pair.npd.pid, ms), measure(pair.ours.pid, ms)]);

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
  readonly startup: StartupTimes & { readonly load: string };
  readonly life: LifeFigures;
  readonly floods: readonly FloodFigures[];
  readonly failure: FailureFigures | Error;
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

function failureRow(f: Figures): Row {
  const w = f.failure instanceof Error ? undefined : f.failure.writes;
  return {
    label: 'API writes in a correlated failure minute (the same hung task every 10 s for 60 s, then 5 s)',
    npd: [w?.npd.total ?? Number.NaN],
    ours: [w?.ours.total ?? Number.NaN],
    format: (v) => `${v}`,
    npdNote: w?.npd.byKind,
    oursNote: w?.ours.byKind,
    load: f.failure instanceof Error ? '' : f.failure.load,
  };
}

function rows(f: Figures, o: VsNpdOptions): Row[] {
  const startup: Row = {
    label: `start-up to first /metrics (median of ${o.runs})`,
    npd: [median(f.startup.npd)],
    ours: [median(f.startup.ours)],
    format: (v) => `${v.toFixed(0)} ms`,
    oursNote: `a bare node:http server, same binary and flags: ${median(f.startup.floor).toFixed(0)} ms`,
    load: f.startup.load,
  };
  const [detection, hwm] = floodRows(f, o) as [Row, Row];
  return [
    startup,
    ...lifeRows(f.life, o),
    lifePeakRow(f.life, o),
    lifeCpuRow(f.life, o),
    detection,
    hwm,
    failureRow(f),
  ];
}

/** A phase against the control plane: a failure to start one is printed, not fatal to the rest. */
async function clusterPhase<T>(name: string, run: () => Promise<T>): Promise<T | Error> {
  const out = await run().catch((err: unknown) => err as Error);
  if (out instanceof Error) console.log(`## ${name}: not measured: ${out.message}`);
  return out;
}

/**
 * The order keeps the kernel-log lookback (5 min in kernel-monitor.json) from carrying one phase's
 * lines into the next's API writes: the failure runs first, and the storm last, more than 5 min later.
 */
export async function vsNpdBench(o: VsNpdOptions): Promise<void> {
  const build = npdBuild();
  console.log(`NPD ${build.binary}; both read /dev/kmsg with ${build.source}/config/kernel-monitor.json`);
  const startup = { ...(await startupTimes(build, o.runs)), load: loadNote() };
  console.log(`## Start-up to first /metrics (ms): NPD ${startup.npd.map((v) => v.toFixed(0)).join(', ')}`);
  console.log(`  this agent ${startup.ours.map((v) => v.toFixed(0)).join(', ')} (${startup.load})`);
  console.log(
    `  a bare node:http server, same binary and flags ${startup.floor.map((v) => v.toFixed(0)).join(', ')}`,
  );
  const failure = await clusterPhase('Correlated failure', () => failureSideBySide(build));
  const lifeF = await life(build, o);
  printLife(lifeF, o);
  const floods: FloodFigures[] = [];
  for (const rate of o.rates) {
    floods.push(await flood(build, rate, o));
    printFlood(floods.at(-1) as FloodFigures);
  }
  const storm = await clusterPhase('Event storm', () => stormSideBySide(build, o));
  console.log(`\n## NPD v1.36.0 vs this agent, same /dev/kmsg, NPD's kernel-monitor.json unchanged\n`);
  console.log(renderTable(rows({ startup, life: lifeF, floods, failure, storm }, o)));
}
