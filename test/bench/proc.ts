/**
 * What the benchmarks read from /proc: CPU time, memory and the machine's load, so every figure can be
 * printed next to how busy the (shared) machine was while it was taken.
 */
import { execFileSync } from 'node:child_process';
import { readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { cpus, loadavg } from 'node:os';

let clkTck: number | undefined;

/** USER_HZ: /proc/<pid>/stat counts CPU time in these ticks (100 on every common kernel). */
export function ticksPerSecond(): number {
  clkTck ??= Number(execFileSync('getconf', ['CLK_TCK'], { encoding: 'utf8' }).trim()) || 100;
  return clkTck;
}

/** utime + stime of the whole process (all threads), in seconds. */
export function cpuSeconds(pid: number): number {
  const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
  // comm may contain spaces and parentheses: the fields after it start two characters past the last ')'.
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  return (Number(fields[11]) + Number(fields[12])) / ticksPerSecond();
}

/** A numeric /proc/<pid>/status field: KiB for VmRSS, VmHWM, RssAnon, RssFile; a count for Threads. */
export function statusKiB(pid: number, field: string): number {
  const text = readFileSync(`/proc/${pid}/status`, 'utf8');
  const m = new RegExp(`^${field}:\\s+(\\d+)`, 'm').exec(text);
  return m ? Number(m[1]) : Number.NaN;
}

export function mib(kib: number): string {
  return `${(kib / 1024).toFixed(1)} MiB`;
}

/** "load 7.81 7.99 7.88 on 2 cores": the 1, 5 and 15 minute load averages. */
export function loadNote(): string {
  const [a = 0, b = 0, c = 0] = loadavg();
  return `load ${a.toFixed(2)} ${b.toFixed(2)} ${c.toFixed(2)} on ${cpus().length} cores`;
}

/** Direct children of `ppid` with their command lines (e.g. the journalctl an agent spawned). */
export function childProcesses(ppid: number): { pid: number; cmdline: string[] }[] {
  const out: { pid: number; cmdline: string[] }[] = [];
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const stat = readFileSync(`/proc/${entry}/stat`, 'utf8');
      const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
      if (Number(fields[1]) !== ppid) continue;
      const cmdline = readFileSync(`/proc/${entry}/cmdline`, 'utf8').split('\0').filter(Boolean);
      out.push({ pid: Number(entry), cmdline });
    } catch {
      // the process ended while we looked
    }
  }
  return out;
}

/** Samples a process every `everyMs` while `body` runs: CPU delta, mean and peak RSS. */
export interface Usage {
  readonly wallSeconds: number;
  readonly cpuSeconds: number;
  /** CPU seconds per wall second, in millicores. */
  readonly millicores: number;
  readonly rssKiB: { readonly min: number; readonly median: number; readonly max: number };
  /** Peak RSS within the window: VmHWM is reset when it starts (clear_refs 5). */
  readonly hwmKiB: number;
  /** VmHWM since the process started (its start-up peak included), read before the reset. */
  readonly hwmSinceStartKiB: number;
  readonly load: string;
}

/** Resets VmHWM to the current RSS (Linux 4.0+, root or the owner), so a later read is a window's peak. */
export function resetPeakRss(pid: number): void {
  writeFileSync(`/proc/${pid}/clear_refs`, '5');
}

export async function measure(pid: number, wallMs: number, everyMs = 1000): Promise<Usage> {
  const startedAt = process.hrtime.bigint();
  const cpu0 = cpuSeconds(pid);
  const hwmSinceStartKiB = statusKiB(pid, 'VmHWM');
  resetPeakRss(pid);
  const rss: number[] = [];
  const loadStart = loadNote();
  while (Number(process.hrtime.bigint() - startedAt) / 1e6 < wallMs) {
    await new Promise((r) => setTimeout(r, everyMs));
    rss.push(statusKiB(pid, 'VmRSS'));
  }
  const wallSeconds = Number(process.hrtime.bigint() - startedAt) / 1e9;
  const cpu = cpuSeconds(pid) - cpu0;
  const sorted = [...rss].sort((a, b) => a - b);
  return {
    wallSeconds,
    cpuSeconds: cpu,
    millicores: (cpu / wallSeconds) * 1000,
    rssKiB: {
      min: sorted[0] ?? Number.NaN,
      median: sorted[Math.floor(sorted.length / 2)] ?? Number.NaN,
      max: sorted[sorted.length - 1] ?? Number.NaN,
    },
    hwmKiB: statusKiB(pid, 'VmHWM'),
    hwmSinceStartKiB,
    load: `start ${loadStart}; end ${loadNote()}`,
  };
}

export function formatUsage(u: Usage): string {
  return [
    `CPU ${u.cpuSeconds.toFixed(2)} s over ${u.wallSeconds.toFixed(1)} s = ${u.millicores.toFixed(1)} millicores`,
    `VmRSS min/median/max ${mib(u.rssKiB.min)} / ${mib(u.rssKiB.median)} / ${mib(u.rssKiB.max)}`,
    `VmHWM in the window ${mib(u.hwmKiB)} (since start ${mib(u.hwmSinceStartKiB)})`,
    `(${u.load})`,
  ].join('; ');
}
