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

export function counter<L extends string = never>(registry: Registry, spec: Spec<L>): Counter<L> {
  const existing = registry.getSingleMetric(spec.name);
  if (existing) return existing as Counter<L>;
  return new CounterClass<L>({ ...spec, labelNames: spec.labelNames ?? [], registers: [registry] });
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
    ...(collect
      ? {
          collect(this: Gauge<L>) {
            return collect(this);
          },
        }
      : {}),
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
