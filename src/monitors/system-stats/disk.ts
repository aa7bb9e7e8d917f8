import { basename, join } from 'node:path';
import { readText } from '../../host/procfs/proc.ts';
import {
  collectParts,
  counterSpec,
  gaugeSpec,
  type Labels,
  type MetricSpec,
  num,
  type StatsCollector,
  type StatsEnv,
  type StatsMetrics,
  sectionMetrics,
} from './common.ts';
import { type Partition, physicalPartitions, rootBlockDevices } from './mounts.ts';
import type { MetricIdOf, SystemStatsConfig } from './schema.ts';

type DiskId = MetricIdOf<'disk'>;

const DISK_SPECS: Readonly<Record<DiskId, MetricSpec>> = {
  'disk/io_time': counterSpec('The IO time spent on the disk, in ms', 'device_name'),
  'disk/weighted_io': counterSpec('The weighted IO on the disk, in ms', 'device_name'),
  'disk/avg_queue_len': gaugeSpec('The average queue length on the disk', 'device_name'),
  'disk/operation_count': counterSpec('Disk operations count', 'device_name', 'direction'),
  'disk/merged_operation_count': counterSpec('Disk merged operations count', 'device_name', 'direction'),
  'disk/operation_bytes_count': counterSpec(
    'Bytes transferred in disk operations',
    'device_name',
    'direction',
  ),
  'disk/operation_time': counterSpec('Time spent in disk operations, in ms', 'device_name', 'direction'),
  'disk/bytes_used': gaugeSpec(
    'Disk bytes used, in Bytes',
    'device_name',
    'fs_type',
    'mount_option',
    'state',
  ),
  'disk/percent_used': gaugeSpec(
    'Disk utilization percentage',
    'device_name',
    'fs_type',
    'mount_option',
    'state',
  ),
};

const IO_IDS: readonly DiskId[] = [
  'disk/io_time',
  'disk/weighted_io',
  'disk/avg_queue_len',
  'disk/operation_count',
  'disk/merged_operation_count',
  'disk/operation_bytes_count',
  'disk/operation_time',
];

/** /proc/diskstats reports sectors of 512 bytes whatever the device's real sector size. */
const SECTOR_BYTES = 512;

export interface IoStat {
  readonly read: {
    readonly ops: number;
    readonly merged: number;
    readonly bytes: number;
    readonly ms: number;
  };
  readonly write: {
    readonly ops: number;
    readonly merged: number;
    readonly bytes: number;
    readonly ms: number;
  };
  readonly ioMs: number;
  readonly weightedIoMs: number;
}

/** /proc/diskstats by device name. Malformed lines and devices that never did I/O are skipped, as gopsutil does. */
export function parseDiskstats(text: string): Map<string, IoStat> {
  const out = new Map<string, IoStat>();
  for (const line of text.split('\n')) {
    const f = line.trim().split(/\s+/);
    const name = f[2];
    if (f.length < 14 || !name) continue;
    const v = f.slice(3, 14).map((x) => num(x, `/proc/diskstats ${name}`));
    const at = (i: number) => v[i] ?? 0;
    if (v.every((x) => x === 0)) continue;
    out.set(name, {
      read: { ops: at(0), merged: at(1), bytes: at(2) * SECTOR_BYTES, ms: at(3) },
      write: { ops: at(4), merged: at(5), bytes: at(6) * SECTOR_BYTES, ms: at(7) },
      ioMs: at(9),
      weightedIoMs: at(10),
    });
  }
  return out;
}

/** The devices NPD asks gopsutil about; none selected means every device in /proc/diskstats. */
async function deviceFilter(
  config: SystemStatsConfig,
  env: StatsEnv,
  partitions: () => Promise<readonly Partition[]>,
): Promise<Set<string> | undefined> {
  const { includeRootBlk, includeAllAttachedBlk } = config.disk;
  if (!includeRootBlk && !includeAllAttachedBlk) return undefined;
  const names = new Set<string>();
  if (includeRootBlk) for (const name of await rootBlockDevices(env.paths.sys)) names.add(name);
  if (includeAllAttachedBlk) for (const p of await partitions()) names.add(basename(p.device));
  return names;
}

/** Counters and the queue length derived from two successive samples. */
class DiskIo {
  private readonly m: StatsMetrics<DiskId>;
  private last: { readonly at: number; readonly weighted: ReadonlyMap<string, number> } | undefined;

  constructor(m: StatsMetrics<DiskId>) {
    this.m = m;
  }

  record(stats: ReadonlyMap<string, IoStat>, at: number): void {
    const queue: [Labels, number][] = [];
    for (const [device, s] of stats) {
      this.m.counter('disk/io_time')?.observe({ device_name: device }, s.ioMs);
      this.m.counter('disk/weighted_io')?.observe({ device_name: device }, s.weightedIoMs);
      for (const direction of ['read', 'write'] as const) {
        const d = s[direction];
        const labels = { device_name: device, direction };
        this.m.counter('disk/operation_count')?.observe(labels, d.ops);
        this.m.counter('disk/merged_operation_count')?.observe(labels, d.merged);
        this.m.counter('disk/operation_bytes_count')?.observe(labels, d.bytes);
        this.m.counter('disk/operation_time')?.observe(labels, d.ms);
      }
      const before = this.last?.weighted.get(device);
      if (this.last && before !== undefined && at > this.last.at) {
        // Weighted I/O time grows by the queue depth every millisecond, so Δweighted/Δt is the mean depth.
        const grown = Math.max(0, s.weightedIoMs - before);
        queue.push([{ device_name: device }, grown / (at - this.last.at)]);
      }
    }
    this.last = { at, weighted: new Map([...stats].map(([d, s]) => [d, s.weightedIoMs])) };
    this.m.gauge('disk/avg_queue_len')?.replace(queue);
    this.m.sweepCounters();
  }
}

/** Space per mounted device, one row per device even when it is mounted several times. */
async function recordUsage(m: StatsMetrics<DiskId>, partitions: readonly Partition[], env: StatsEnv) {
  const bytes: [Labels, number][] = [];
  const percent: [Labels, number][] = [];
  const seen = new Set<string>();
  for (const p of partitions) {
    if (seen.has(p.device)) continue;
    seen.add(p.device);
    let s: Awaited<ReturnType<StatsEnv['statfs']>>;
    try {
      s = await env.statfs(join(env.paths.root, p.mountpoint));
    } catch (err) {
      env.fail(err);
      continue;
    }
    // gopsutil's disk.Usage: free is what unprivileged users may still write, so reserved blocks count as used.
    const free = s.bavail * s.bsize;
    const used = (s.blocks - s.bfree) * s.bsize;
    const pct = used + free > 0 ? (used * 100) / (used + free) : 0;
    const base = {
      device_name: p.device.replace(/^\/dev\//, ''),
      fs_type: p.fstype,
      mount_option: p.opts.join(','),
    };
    bytes.push([{ ...base, state: 'free' }, free], [{ ...base, state: 'used' }, used]);
    percent.push([{ ...base, state: 'free' }, 100 - pct], [{ ...base, state: 'used' }, pct]);
  }
  m.gauge('disk/bytes_used')?.replace(bytes);
  m.gauge('disk/percent_used')?.replace(percent);
}

/** NPD's disk collector: I/O from /proc/diskstats, space from statfs(2) of each mounted block device. */
export function createDiskCollector(config: SystemStatsConfig, env: StatsEnv): StatsCollector | undefined {
  const m = sectionMetrics(env, config.disk.metrics, DISK_SPECS);
  if (!m) return undefined;
  const io = new DiskIo(m);
  const wantsIo = m.has(...IO_IDS);
  const wantsUsage = m.has('disk/bytes_used', 'disk/percent_used');
  return {
    name: 'disk',
    async collect() {
      // Read at most once per collection, and only if some metric needs the mount table.
      let mounts: Promise<Partition[]> | undefined;
      const partitions = () => {
        mounts ??= physicalPartitions(env);
        return mounts;
      };
      const parts: (() => Promise<void>)[] = [];
      if (wantsIo) {
        parts.push(async () => {
          const filter = await deviceFilter(config, env, partitions);
          const all = parseDiskstats(await readText(join(env.proc, 'diskstats')));
          const picked = new Map([...all].filter(([name]) => !filter || filter.has(name)));
          io.record(picked, env.clock.now());
        });
      }
      if (wantsUsage) parts.push(async () => recordUsage(m, await partitions(), env));
      await collectParts(env, parts);
    },
    dispose: () => m.dispose(),
  };
}
