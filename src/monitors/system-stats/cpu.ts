import { join } from 'node:path';
import { readText } from '../../host/procfs/proc.ts';
import {
  collectParts,
  counterSpec,
  gaugeSpec,
  type MetricSpec,
  num,
  type StatsCollector,
  type StatsEnv,
  type StatsMetrics,
  sectionMetrics,
} from './common.ts';
import type { MetricIdOf, SystemStatsConfig } from './schema.ts';

type CpuId = MetricIdOf<'cpu'>;

const CPU_SPECS: Readonly<Record<CpuId, MetricSpec>> = {
  'cpu/runnable_task_count': gaugeSpec(
    'The average number of runnable tasks in the run-queue during the last minute',
  ),
  'cpu/usage_time': counterSpec('CPU usage, in seconds', 'state'),
  'cpu/load_1m': gaugeSpec('CPU average load (1m)'),
  'cpu/load_5m': gaugeSpec('CPU average load (5m)'),
  'cpu/load_15m': gaugeSpec('CPU average load (15m)'),
  'system/processes_total': counterSpec('Number of forks since boot.'),
  'system/procs_running': gaugeSpec('Number of processes currently running.'),
  'system/procs_blocked': gaugeSpec('Number of processes currently blocked.'),
  'system/interrupts_total': counterSpec('Total number of interrupts serviced (cumulative).'),
  'system/cpu_stat': counterSpec(
    'Cumulative time each cpu spent in various stages, in seconds.',
    'cpu',
    'stage',
  ),
};

/**
 * The columns of a `cpu` line in /proc/stat, with NPD's label value for cpu/usage_time (gopsutil's
 * names) and for system/cpu_stat (prometheus/procfs's names).
 */
const CPU_COLUMNS: readonly { readonly state: string; readonly stage: string }[] = [
  { state: 'user', stage: 'user' },
  { state: 'nice', stage: 'nice' },
  { state: 'system', stage: 'system' },
  { state: 'idle', stage: 'idle' },
  { state: 'iowait', stage: 'iowait' },
  { state: 'irq', stage: 'iRQ' },
  { state: 'softirq', stage: 'softIRQ' },
  { state: 'steal', stage: 'steal' },
  { state: 'guest', stage: 'guest' },
  { state: 'guest_nice', stage: 'guestNice' },
];

/** USER_HZ. Reading sysconf(_SC_CLK_TCK) needs native code; it is 100 on every Linux NPD targets, as NPD assumes. */
const CLOCK_TICKS_PER_SECOND = 100;

export interface ProcStat {
  /** Seconds per column of CPU_COLUMNS: the `cpu` total line, then each `cpuN` line by name. */
  readonly total: readonly number[];
  readonly perCpu: ReadonlyMap<string, readonly number[]>;
  readonly processes: number;
  readonly procsRunning: number;
  readonly procsBlocked: number;
  readonly interrupts: number;
}

/** Parses /proc/stat. Older kernels have fewer cpu columns; the missing ones read as 0. */
export function parseProcStat(text: string): ProcStat {
  const perCpu = new Map<string, number[]>();
  const fields = new Map<string, string[]>();
  for (const line of text.split('\n')) {
    const [key, ...rest] = line.trim().split(/\s+/);
    if (!key) continue;
    if (key.startsWith('cpu')) {
      perCpu.set(
        key,
        CPU_COLUMNS.map((_, i) => (rest[i] === undefined ? 0 : num(rest[i], key) / CLOCK_TICKS_PER_SECOND)),
      );
    } else {
      fields.set(key, rest);
    }
  }
  const total = perCpu.get('cpu');
  if (!total) throw new Error('/proc/stat: no cpu line');
  perCpu.delete('cpu');
  return {
    total,
    perCpu,
    processes: num(fields.get('processes')?.[0], 'processes'),
    procsRunning: num(fields.get('procs_running')?.[0], 'procs_running'),
    procsBlocked: num(fields.get('procs_blocked')?.[0], 'procs_blocked'),
    interrupts: num(fields.get('intr')?.[0], 'intr'),
  };
}

/** /proc/loadavg's three load averages. */
export function parseLoadavg(text: string): [number, number, number] {
  const [l1, l5, l15] = text.trim().split(/\s+/);
  return [num(l1, 'loadavg'), num(l5, 'loadavg'), num(l15, 'loadavg')];
}

function recordLoad(m: StatsMetrics<CpuId>, [l1, l5, l15]: readonly [number, number, number]): void {
  m.gauge('cpu/runnable_task_count')?.replace([[{}, l1]]);
  m.gauge('cpu/load_1m')?.replace([[{}, l1]]);
  m.gauge('cpu/load_5m')?.replace([[{}, l5]]);
  m.gauge('cpu/load_15m')?.replace([[{}, l15]]);
}

function recordStat(m: StatsMetrics<CpuId>, stat: ProcStat): void {
  const usage = m.counter('cpu/usage_time');
  CPU_COLUMNS.forEach(({ state }, i) => {
    usage?.observe({ state }, stat.total[i] ?? 0);
  });
  m.counter('system/processes_total')?.observe({}, stat.processes);
  m.counter('system/interrupts_total')?.observe({}, stat.interrupts);
  m.gauge('system/procs_running')?.replace([[{}, stat.procsRunning]]);
  m.gauge('system/procs_blocked')?.replace([[{}, stat.procsBlocked]]);
  const perCpu = m.counter('system/cpu_stat');
  if (!perCpu) return;
  for (const [cpu, values] of stat.perCpu) {
    CPU_COLUMNS.forEach(({ stage }, i) => {
      perCpu.observe({ cpu, stage }, values[i] ?? 0);
    });
  }
}

/** NPD's cpu collector: /proc/loadavg and /proc/stat, each read only when one of its metrics is wanted. */
export function createCpuCollector(config: SystemStatsConfig, env: StatsEnv): StatsCollector | undefined {
  const m = sectionMetrics(env, config.cpu.metrics, CPU_SPECS);
  if (!m) return undefined;
  const wantsLoad = m.has('cpu/runnable_task_count', 'cpu/load_1m', 'cpu/load_5m', 'cpu/load_15m');
  const wantsStat = m.has(
    'cpu/usage_time',
    'system/processes_total',
    'system/procs_running',
    'system/procs_blocked',
    'system/interrupts_total',
    'system/cpu_stat',
  );
  return {
    name: 'cpu',
    async collect() {
      const parts: (() => Promise<void>)[] = [];
      if (wantsLoad) {
        parts.push(async () => recordLoad(m, parseLoadavg(await readText(join(env.proc, 'loadavg')))));
      }
      if (wantsStat) {
        parts.push(async () => recordStat(m, parseProcStat(await readText(join(env.proc, 'stat')))));
      }
      await collectParts(env, parts);
    },
    dispose: () => m.dispose(),
  };
}
