import { readdirSync, readFileSync } from 'node:fs';
import type { Gauge, Registry } from 'prom-client';
import { counter, gauge } from '../core/metrics.ts';

/** Where the agent reads its own process figures; tests inject fakes. */
export interface ProcessInfo {
  /** Microseconds of CPU time, as process.cpuUsage() reports them. */
  cpuUsage(): { readonly user: number; readonly system: number };
  /** Unix seconds the process started at. */
  startTimeSeconds(): number;
  /** /proc/self/status. */
  status(): string;
  /** Entries of /proc/self/fd. */
  openFds(): number;
  /** /proc/self/limits. */
  limits(): string;
}

export function realProcessInfo(): ProcessInfo {
  const start = Math.round(Date.now() / 1000 - process.uptime());
  return {
    cpuUsage: () => process.cpuUsage(),
    startTimeSeconds: () => start,
    status: () => readFileSync('/proc/self/status', 'utf8'),
    // readdirSync holds one descriptor of its own while it reads.
    openFds: () => readdirSync('/proc/self/fd').length - 1,
    limits: () => readFileSync('/proc/self/limits', 'utf8'),
  };
}

/** A `Vm*:   1234 kB` line of /proc/<pid>/status, in bytes. */
function statusBytes(status: string, key: string): number | undefined {
  const m = new RegExp(`^${key}:\\s*(\\d+)\\s*kB`, 'm').exec(status);
  return m?.[1] === undefined ? undefined : Number(m[1]) * 1024;
}

/** The soft "Max open files" limit of /proc/<pid>/limits. */
function maxFds(limits: string): number | undefined {
  const m = /^Max open files\s+(\d+)/m.exec(limits);
  return m?.[1] === undefined ? undefined : Number(m[1]);
}

function tryRead<T>(read: () => T): T | undefined {
  try {
    return read();
  } catch {
    return undefined;
  }
}

/**
 * CPU counters grow by what process.cpuUsage() gained since the previous scrape. The metric whose collect
 * sets the others is registered first: the registry collects in registration order, so the others are
 * read after it has set them.
 */
function cpuMetrics(registry: Registry, info: ProcessInfo): void {
  let last = { user: 0, system: 0 };
  counter(registry, {
    name: 'process_cpu_user_seconds_total',
    help: 'Total user CPU time spent in seconds.',
    collect(user) {
      const now = info.cpuUsage();
      const du = Math.max(0, now.user - last.user) / 1e6;
      const ds = Math.max(0, now.system - last.system) / 1e6;
      last = now;
      user.inc(du);
      system.inc(ds);
      total.inc(du + ds);
    },
  });
  const system = counter(registry, {
    name: 'process_cpu_system_seconds_total',
    help: 'Total system CPU time spent in seconds.',
  });
  const total = counter(registry, {
    name: 'process_cpu_seconds_total',
    help: 'Total user and system CPU time spent in seconds.',
  });
}

/** One read of /proc/self/status per scrape sets all three (registered first, as above). */
function memoryMetrics(registry: Registry, info: ProcessInfo): void {
  const set = (g: Gauge, status: string, key: string) => {
    const bytes = statusBytes(status, key);
    if (bytes !== undefined) g.set(bytes);
  };
  gauge(registry, {
    name: 'process_resident_memory_bytes',
    help: 'Resident memory size in bytes.',
    collect: (rss) => {
      const status = tryRead(info.status) ?? '';
      set(rss, status, 'VmRSS');
      set(virtual, status, 'VmSize');
      set(heap, status, 'VmData');
    },
  });
  const virtual = gauge(registry, {
    name: 'process_virtual_memory_bytes',
    help: 'Virtual memory size in bytes.',
  });
  const heap = gauge(registry, { name: 'process_heap_bytes', help: 'Process heap size in bytes.' });
}

/**
 * The standard process metrics Prometheus client libraries export (names and help as prom-client and
 * client_golang write them), read from /proc/self at scrape time: no timer runs between scrapes.
 * prom-client's own collectDefaultMetrics is not used: its CPU collector loads @opentelemetry/api
 * (about 8 MiB of RSS) and its event-loop-lag collector keeps a 10 ms timer running.
 */
export function registerProcessMetrics(registry: Registry, info: ProcessInfo = realProcessInfo()): void {
  if (registry.getSingleMetric('process_cpu_seconds_total')) return;
  cpuMetrics(registry, info);
  gauge(registry, {
    name: 'process_start_time_seconds',
    help: 'Start time of the process since unix epoch in seconds.',
    collect: (g) => g.set(info.startTimeSeconds()),
  });
  memoryMetrics(registry, info);
  gauge(registry, {
    name: 'process_open_fds',
    help: 'Number of open file descriptors.',
    collect: (g) => {
      const n = tryRead(info.openFds);
      if (n !== undefined) g.set(n);
    },
  });
  gauge(registry, {
    name: 'process_max_fds',
    help: 'Maximum number of open file descriptors.',
    collect: (g) => {
      const n = maxFds(tryRead(info.limits) ?? '');
      if (n !== undefined) g.set(n);
    },
  });
}
