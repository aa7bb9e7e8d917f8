import { Counter, Gauge, Histogram, Registry } from 'prom-client';

/**
 * Metrics live in one Registry per agent (never prom-client's global one), so tests can build as many
 * agents as they like. Components declare their own metrics through these helpers; declaring the same
 * name twice returns the existing metric instead of throwing.
 */
export function createRegistry(): Registry {
  return new Registry();
}

interface Spec<L extends string> {
  readonly name: string;
  readonly help: string;
  readonly labelNames?: readonly L[];
}

export function counter<L extends string = never>(registry: Registry, spec: Spec<L>): Counter<L> {
  const existing = registry.getSingleMetric(spec.name);
  if (existing) return existing as Counter<L>;
  return new Counter<L>({ ...spec, labelNames: spec.labelNames ?? [], registers: [registry] });
}

/** `collect` runs at scrape time, for values that are cheapest read when asked for. */
export function gauge<L extends string = never>(
  registry: Registry,
  spec: Spec<L> & { readonly collect?: (g: Gauge<L>) => void | Promise<void> },
): Gauge<L> {
  const existing = registry.getSingleMetric(spec.name);
  if (existing) return existing as Gauge<L>;
  const { collect, ...rest } = spec;
  return new Gauge<L>({
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
  return new Histogram<L>({
    ...spec,
    buckets: [...spec.buckets],
    labelNames: spec.labelNames ?? [],
    registers: [registry],
  });
}
