import { join } from 'node:path';
import { readText } from '../../host/procfs/proc.ts';
import {
  gaugeSpec,
  type MetricSpec,
  type StatsCollector,
  type StatsEnv,
  type StatsMetrics,
  sectionMetrics,
} from './common.ts';
import type { MetricIdOf, SystemStatsConfig } from './schema.ts';

type MemoryId = MetricIdOf<'memory'>;

const MEMORY_SPECS: Readonly<Record<MemoryId, MetricSpec>> = {
  'memory/bytes_used': gaugeSpec(
    'Memory usage by each memory state, in Bytes. Summing values of all states yields the total memory on the node.',
    'state',
  ),
  'memory/percent_used': gaugeSpec('Memory usage in percentage of total memory.', 'state'),
  'memory/anonymous_used': gaugeSpec(
    'Anonymous memory usage, in Bytes. Summing values of all states yields the total anonymous memory used.',
    'state',
  ),
  'memory/page_cache_used': gaugeSpec(
    'Page cache memory usage, in Bytes. Summing values of all states yields the total page cache memory used.',
    'state',
  ),
  'memory/unevictable_used': gaugeSpec('Unevictable memory usage, in Bytes'),
  'memory/dirty_used': gaugeSpec(
    'Dirty pages usage, in Bytes. Dirty means the memory is waiting to be written back to disk, and writeback means the memory is actively being written back to disk.',
    'state',
  ),
};

/** /proc/meminfo in bytes, by field name ("MemTotal", "Active(anon)", ...). */
export function parseMeminfo(text: string): ReadonlyMap<string, number> {
  const out = new Map<string, number>();
  for (const line of text.split('\n')) {
    const m = /^([^:\s]+):\s+(\d+)(?:\s+kB)?\s*$/.exec(line);
    if (!m?.[1] || !m[2]) continue;
    out.set(m[1], Number(m[2]) * (line.trimEnd().endsWith('kB') ? 1024 : 1));
  }
  return out;
}

function field(info: ReadonlyMap<string, number>, name: string): number {
  const value = info.get(name);
  if (value === undefined) throw new Error(`/proc/meminfo: no ${name}`);
  return value;
}

type Field = (name: string) => number;

function recordUsage(m: StatsMetrics<MemoryId>, f: Field): void {
  const total = f('MemTotal');
  const free = f('MemFree');
  const buffered = f('Buffers');
  const cached = f('Cached');
  const slab = f('Slab');
  // NPD's definition; summing every state of memory/bytes_used gives MemTotal.
  const used = total - free - buffered - cached - slab;
  m.gauge('memory/bytes_used')?.replace([
    [{ state: 'free' }, free],
    [{ state: 'used' }, used],
    [{ state: 'buffered' }, buffered],
    [{ state: 'cached' }, cached],
    [{ state: 'slab' }, slab],
  ]);
  m.gauge('memory/percent_used')?.replace([[{ state: 'used' }, total > 0 ? (used * 100) / total : 0]]);
}

/** Optional chaining skips the arguments too, so only the fields of configured metrics must exist. */
function recordKinds(m: StatsMetrics<MemoryId>, f: Field): void {
  m.gauge('memory/anonymous_used')?.replace([
    [{ state: 'active' }, f('Active(anon)')],
    [{ state: 'inactive' }, f('Inactive(anon)')],
  ]);
  m.gauge('memory/page_cache_used')?.replace([
    [{ state: 'active' }, f('Active(file)')],
    [{ state: 'inactive' }, f('Inactive(file)')],
  ]);
  m.gauge('memory/unevictable_used')?.replace([[{}, f('Unevictable')]]);
  m.gauge('memory/dirty_used')?.replace([
    [{ state: 'dirty' }, f('Dirty')],
    [{ state: 'writeback' }, f('Writeback')],
  ]);
}

/** NPD's memory collector: everything comes from one read of /proc/meminfo. */
export function createMemoryCollector(config: SystemStatsConfig, env: StatsEnv): StatsCollector | undefined {
  const m = sectionMetrics(env, config.memory.metrics, MEMORY_SPECS);
  if (!m) return undefined;
  return {
    name: 'memory',
    async collect() {
      const info = parseMeminfo(await readText(join(env.proc, 'meminfo')));
      const f: Field = (name) => field(info, name);
      if (m.has('memory/bytes_used', 'memory/percent_used')) recordUsage(m, f);
      recordKinds(m, f);
    },
    dispose: () => m.dispose(),
  };
}
