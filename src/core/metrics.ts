import type { Counter, Gauge, Histogram, Registry } from 'prom-client';
import CounterClass from 'prom-client/lib/counter.js';
import GaugeClass from 'prom-client/lib/gauge.js';
import HistogramClass from 'prom-client/lib/histogram.js';
import RegistryClass from 'prom-client/lib/registry.js';

/**
 * Metrics live in one Registry per agent (never prom-client's global one), so tests can build as many
 * agents as they like. Components declare their own metrics through these helpers; declaring the same
 * name twice returns the existing metric instead of throwing.
 */
export function createRegistry(): Registry {
  return new RegistryClass();
}

interface Spec<L extends string> {
  readonly name: string;
  readonly help: string;
  readonly labelNames?: readonly L[];
}

/** prom-client calls a metric's `collect` with the metric as `this`; ours take it as an argument. */
function collectOption<M>(collect: ((metric: M) => void | Promise<void>) | undefined) {
  return collect
    ? {
        collect(this: M) {
          return collect(this);
        },
      }
    : {};
}

/** `collect` runs at scrape time, for totals read from elsewhere (the kernel's CPU time, say). */
export function counter<L extends string = never>(
  registry: Registry,
  spec: Spec<L> & { readonly collect?: (c: Counter<L>) => void },
): Counter<L> {
  const existing = registry.getSingleMetric(spec.name);
  if (existing) return existing as Counter<L>;
  const { collect, ...rest } = spec;
  return new CounterClass<L>({
    ...rest,
    labelNames: spec.labelNames ?? [],
    registers: [registry],
    ...collectOption(collect),
  });
}

/**
 * Creates each labelled series at 0 as soon as what counts it exists: without a zero sample, increase()
 * and rate() see nothing of the first increment, so an alert misses a one-off loss.
 */
export function zeroed<L extends string>(c: Counter<L>, ...labelSets: Partial<Record<L, string>>[]): void {
  for (const labels of labelSets) c.inc(labels, 0);
}

/** `collect` runs at scrape time, for values that are cheapest read when asked for. */
export function gauge<L extends string = never>(
  registry: Registry,
  spec: Spec<L> & { readonly collect?: (g: Gauge<L>) => void | Promise<void> },
): Gauge<L> {
  const existing = registry.getSingleMetric(spec.name);
  if (existing) return existing as Gauge<L>;
  const { collect, ...rest } = spec;
  return new GaugeClass<L>({
    ...rest,
    labelNames: spec.labelNames ?? [],
    registers: [registry],
    ...collectOption(collect),
  });
}

export function histogram<L extends string = never>(
  registry: Registry,
  spec: Spec<L> & { readonly buckets: readonly number[] },
): Histogram<L> {
  const existing = registry.getSingleMetric(spec.name);
  if (existing) return existing as Histogram<L>;
  return new HistogramClass<L>({
    ...spec,
    buckets: [...spec.buckets],
    labelNames: spec.labelNames ?? [],
    registers: [registry],
  });
}
