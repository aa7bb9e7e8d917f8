import { join } from 'node:path';
import type { Counter, Gauge, LabelValues, Registry } from 'prom-client';
import GaugeClass from 'prom-client/lib/gauge.js';
import type { Clock } from '../../core/clock.ts';
import { counter, gauge } from '../../core/metrics.ts';
import type { HostPaths } from '../../host/paths.ts';
import type { StatfsFn } from '../../host/procfs/statfs.ts';
import type { MetricNames, StatsSection } from './schema.ts';

/** What a collector needs from the monitor. Paths are already below the host root. */
export interface StatsEnv {
  readonly registry: Registry;
  readonly clock: Clock;
  readonly paths: HostPaths;
  /** The config's procPath: --host-proc for the default /proc, otherwise below the host root. */
  readonly proc: string;
  /** The host's mount table: PID 1's mountinfo of that proc (the host root's for the default). */
  readonly mountinfo: string;
  readonly statfs: StatfsFn;
  /** Records a failure that spoiled part of a collection; the rest of the collection carries on. */
  readonly fail: (err: unknown) => void;
}

/** One of NPD's collectors (cpu, disk, host, memory, net, os-feature). */
export interface StatsCollector {
  /** The `collector` label of npd_system_stats_errors_total. */
  readonly name: string;
  /** Reads the host once and updates the metrics; throws when nothing could be read. */
  collect(): Promise<void>;
  /** Unregisters the metrics this collector created, so a reloaded config leaves no stale series. */
  dispose(): void;
}

export type Labels = LabelValues<string>;

export interface MetricSpec {
  readonly type: 'gauge' | 'counter';
  readonly help: string;
  readonly labels: readonly string[];
}

export const gaugeSpec = (help: string, ...labels: string[]): MetricSpec => ({ type: 'gauge', help, labels });
export const counterSpec = (help: string, ...labels: string[]): MetricSpec => ({
  type: 'counter',
  help,
  labels,
});

/** A gauge family whose series are rewritten as a whole, so devices that went away disappear. */
export class GaugeFamily {
  private readonly gauge: Gauge<string>;
  private readonly unlabelled: boolean;

  constructor(g: Gauge<string>, unlabelled: boolean) {
    this.gauge = g;
    this.unlabelled = unlabelled;
  }

  /** Synchronous, so a scrape never sees the family half rewritten. */
  replace(rows: readonly (readonly [Labels, number])[]): void {
    this.gauge.reset();
    // prom-client resets an unlabelled gauge to 0; no reading is not a reading of 0.
    if (this.unlabelled) this.gauge.remove({});
    for (const [labels, value] of rows) this.gauge.set(labels, value);
  }
}

interface Sample {
  readonly labels: Labels;
  value: number;
}

/**
 * A Prometheus counter fed from a cumulative kernel counter. NPD records per-interval deltas, so the
 * exported value counts since the agent started: the first sample of a series is its baseline (0).
 */
export class DeltaCounter {
  private readonly counter: Counter<string>;
  private readonly last = new Map<string, Sample>();
  private readonly seen = new Set<string>();

  constructor(c: Counter<string>) {
    this.counter = c;
  }

  observe(labels: Labels, raw: number): void {
    const key = JSON.stringify(labels);
    this.seen.add(key);
    const prev = this.last.get(key);
    if (!prev) {
      this.last.set(key, { labels, value: raw });
      this.counter.inc(labels, 0);
      return;
    }
    // A smaller reading means the kernel counter restarted (device re-created), so count from zero.
    const delta = raw >= prev.value ? raw - prev.value : raw;
    prev.value = raw;
    if (delta > 0) this.counter.inc(labels, delta);
  }

  /** Drops series not observed since the last sweep, so veth churn does not grow the output forever. */
  sweep(): void {
    for (const [key, sample] of this.last) {
      if (this.seen.has(key)) continue;
      this.last.delete(key);
      this.counter.remove(sample.labels);
    }
    this.seen.clear();
  }
}

/** The configured metrics of one collector, by NPD metric ID; unconfigured IDs have no metric. */
export class StatsMetrics<Id extends string> {
  private readonly registry: Registry;
  private readonly gauges = new Map<Id, GaugeFamily>();
  private readonly counters = new Map<Id, DeltaCounter>();
  private readonly created: string[] = [];

  constructor(
    registry: Registry,
    names: Readonly<Partial<Record<Id, string>>>,
    specs: Readonly<Record<Id, MetricSpec>>,
  ) {
    this.registry = registry;
    for (const [id, name] of Object.entries(names) as [Id, string][]) {
      const spec = specs[id];
      if (!spec) continue;
      const existed = registry.getSingleMetric(name) !== undefined;
      const def = { name, help: spec.help, labelNames: spec.labels };
      const unlabelled = spec.labels.length === 0;
      const metric = spec.type === 'gauge' ? gauge(registry, def) : counter(registry, def);
      if (metric instanceof GaugeClass) this.gauges.set(id, new GaugeFamily(metric, unlabelled));
      else this.counters.set(id, new DeltaCounter(metric));
      if (existed) continue;
      this.created.push(name);
      // prom-client starts an unlabelled metric at 0; NPD exports nothing until the first reading.
      if (unlabelled) metric.remove({});
    }
  }

  get size(): number {
    return this.gauges.size + this.counters.size;
  }

  has(...ids: Id[]): boolean {
    return ids.some((id) => this.gauges.has(id) || this.counters.has(id));
  }

  gauge(id: Id): GaugeFamily | undefined {
    return this.gauges.get(id);
  }

  counter(id: Id): DeltaCounter | undefined {
    return this.counters.get(id);
  }

  sweepCounters(): void {
    for (const c of this.counters.values()) c.sweep();
  }

  dispose(): void {
    for (const name of this.created) this.registry.removeSingleMetric(name);
  }
}

/** Builds a collector's metrics, or returns undefined when its section exports none (NPD makes no collector). */
export function sectionMetrics<S extends StatsSection, Id extends string>(
  env: StatsEnv,
  names: MetricNames<S>,
  specs: Readonly<Record<Id, MetricSpec>>,
): StatsMetrics<Id> | undefined {
  const metrics = new StatsMetrics<Id>(env.registry, names as Partial<Record<Id, string>>, specs);
  return metrics.size > 0 ? metrics : undefined;
}

/**
 * Runs the parts of a collection independently: a failed part is recorded and the others still run.
 * When every part fails nothing was read at all, so the last failure is thrown for the monitor to count.
 */
export async function collectParts(env: StatsEnv, parts: readonly (() => Promise<void>)[]): Promise<void> {
  let failed = 0;
  for (const part of parts) {
    try {
      await part();
    } catch (err) {
      if (++failed === parts.length) throw err;
      env.fail(err);
    }
  }
}

/** Parses a decimal field of a /proc file; malformed input is an error, not a silent zero. */
export function num(field: string | undefined, what: string): number {
  const n = field === undefined ? Number.NaN : Number(field);
  if (!Number.isFinite(n)) throw new Error(`${what}: not a number: ${JSON.stringify(field)}`);
  return n;
}

/**
 * Where a collector reads procPath. The default /proc is the agent's --host-proc, so a DaemonSet that
 * mounts no host /proc still reads the kernel-wide files; any other procPath is below the host root, as
 * in NPD-style setups that mount a host /proc there. Only the host root's /proc/1 is the host's init.
 */
export function statsProcPaths(paths: HostPaths, procPath: string): { proc: string; mountinfo: string } {
  if (procPath === '/proc') return { proc: paths.proc, mountinfo: paths.initMountinfo };
  const proc = join(paths.root, procPath);
  return { proc, mountinfo: join(proc, '1', 'mountinfo') };
}
