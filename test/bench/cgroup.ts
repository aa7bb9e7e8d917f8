/**
 * What a container's cgroup says about it: memory use and peak, OOM kills, CPU time and CFS throttling.
 * Works on cgroup v1 (each controller its own hierarchy, as on this machine's hybrid layout) and v2.
 *   v1: memory.usage_in_bytes, memory.max_usage_in_bytes (writing 0 resets the peak), memory.oom_control
 *       (oom_kill), memory.stat (total_rss, total_cache), cpuacct.usage (ns), cpu.stat (nr_periods,
 *       nr_throttled, throttled_time in ns)
 *   v2: memory.current, memory.peak (not resettable for other readers), memory.events (oom_kill),
 *       memory.stat (anon, file), cpu.stat (usage_usec, nr_periods, nr_throttled, throttled_usec)
 */
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

export interface Cgroup {
  readonly version: 1 | 2;
  readonly memoryDir: string;
  readonly cpuDir: string;
  readonly cpuacctDir: string;
}

export interface CgroupReading {
  readonly memoryBytes: number;
  /** Peak since start, or since the last resetPeak() on v1. */
  readonly peakBytes: number;
  readonly anonBytes: number;
  readonly fileBytes: number;
  readonly oomKills: number;
  readonly cpuNs: number;
  readonly periods: number;
  readonly throttledPeriods: number;
  readonly throttledNs: number;
}

/** The cgroup of `pid` as the host sees it, from /proc/<pid>/cgroup. */
export function cgroupOf(pid: number, root = '/sys/fs/cgroup', proc = '/proc'): Cgroup {
  const lines = readFileSync(join(proc, String(pid), 'cgroup'), 'utf8')
    .trim()
    .split('\n');
  const v1 = (controller: string) => {
    const line = lines.find((l) => l.split(':')[1]?.split(',').includes(controller));
    return line ? join(root, controller, line.split(':').slice(2).join(':')) : undefined;
  };
  const memory = v1('memory');
  if (memory && existsSync(join(memory, 'memory.usage_in_bytes'))) {
    const cpu = v1('cpu') ?? memory;
    return { version: 1, memoryDir: memory, cpuDir: cpu, cpuacctDir: v1('cpuacct') ?? cpu };
  }
  const unified = lines.find((l) => l.startsWith('0::'));
  if (!unified) throw new Error(`no memory cgroup for pid ${pid}: ${lines.join('; ')}`);
  const dir = join(root, unified.slice(3));
  return { version: 2, memoryDir: dir, cpuDir: dir, cpuacctDir: dir };
}

/** `key value` lines (memory.stat, cpu.stat, memory.events, memory.oom_control) as a map. */
function keyed(file: string): Map<string, number> {
  const out = new Map<string, number>();
  for (const line of readFileSync(file, 'utf8').split('\n')) {
    const [k, v] = line.split(' ');
    if (k && v !== undefined) out.set(k, Number(v));
  }
  return out;
}

const num = (file: string): number => Number(readFileSync(file, 'utf8').trim());

function readV1(cg: Cgroup): CgroupReading {
  const mem = (f: string) => join(cg.memoryDir, f);
  const stat = keyed(mem('memory.stat'));
  const cpu = keyed(join(cg.cpuDir, 'cpu.stat'));
  return {
    memoryBytes: num(mem('memory.usage_in_bytes')),
    peakBytes: num(mem('memory.max_usage_in_bytes')),
    anonBytes: stat.get('total_rss') ?? Number.NaN,
    fileBytes: stat.get('total_cache') ?? Number.NaN,
    oomKills: keyed(mem('memory.oom_control')).get('oom_kill') ?? Number.NaN,
    cpuNs: num(join(cg.cpuacctDir, 'cpuacct.usage')),
    periods: cpu.get('nr_periods') ?? Number.NaN,
    throttledPeriods: cpu.get('nr_throttled') ?? Number.NaN,
    throttledNs: cpu.get('throttled_time') ?? Number.NaN,
  };
}

function readV2(cg: Cgroup): CgroupReading {
  const f = (name: string) => join(cg.memoryDir, name);
  const stat = keyed(f('memory.stat'));
  const cpu = keyed(f('cpu.stat'));
  return {
    memoryBytes: num(f('memory.current')),
    peakBytes: existsSync(f('memory.peak')) ? num(f('memory.peak')) : Number.NaN,
    anonBytes: stat.get('anon') ?? Number.NaN,
    fileBytes: stat.get('file') ?? Number.NaN,
    oomKills: keyed(f('memory.events')).get('oom_kill') ?? Number.NaN,
    cpuNs: (cpu.get('usage_usec') ?? Number.NaN) * 1000,
    periods: cpu.get('nr_periods') ?? Number.NaN,
    throttledPeriods: cpu.get('nr_throttled') ?? Number.NaN,
    throttledNs: (cpu.get('throttled_usec') ?? Number.NaN) * 1000,
  };
}

export function readCgroup(cg: Cgroup): CgroupReading {
  return cg.version === 1 ? readV1(cg) : readV2(cg);
}

/** Starts a new peak (v1 only); false where the peak cannot be reset and stays the peak since start. */
export function resetPeak(cg: Cgroup): boolean {
  if (cg.version !== 1) return false;
  writeFileSync(join(cg.memoryDir, 'memory.max_usage_in_bytes'), '0');
  return true;
}
