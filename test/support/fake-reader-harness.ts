/**
 * What the fake-clock reader harnesses (test/unit/sources/...) share: time units, the
 * dependencies every reader under test gets (its clock, a fresh registry, a silent logger), and exact
 * reads of the counters it keeps.
 */
import type { Registry } from 'prom-client';
import type { Clock } from '../../src/core/clock.ts';
import { type Logger, silentLogger } from '../../src/core/logger.ts';
import { createRegistry } from '../../src/core/metrics.ts';

export const SECOND = 1000;
export const MINUTE = 60 * SECOND;
export const HOUR = 60 * MINUTE;

export interface ReaderDeps<C extends Clock> {
  readonly clock: C;
  readonly registry: Registry;
  readonly logger: Logger;
}

/** The clock given, a fresh metrics registry and a logger that writes nothing. */
export function readerDeps<C extends Clock>(clock: C): ReaderDeps<C> {
  return { clock, registry: createRegistry(), logger: silentLogger() };
}

/** A counter's value for exactly these labels (0 when never incremented). */
async function exactMetric(
  registry: Registry,
  name: string,
  labels: Readonly<Record<string, string>>,
): Promise<number> {
  const found = registry.getSingleMetric(name);
  if (!found) return 0;
  const { values } = await found.get();
  const wanted = Object.entries(labels);
  const hit = values.find(
    (v) => Object.keys(v.labels).length === wanted.length && wanted.every(([k, x]) => v.labels[k] === x),
  );
  return hit?.value ?? 0;
}

/** Reads counters as exactMetric does, the labels defaulting to `{ source }`. */
export function counterReader(source: string) {
  return (registry: Registry, name: string, labels: Readonly<Record<string, string>> = { source }) =>
    exactMetric(registry, name, labels);
}
