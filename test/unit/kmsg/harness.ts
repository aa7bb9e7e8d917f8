import type { Registry } from 'prom-client';
import { createRegistry } from '../../../src/metrics/registry.ts';
import { KmsgReader, type KmsgReaderOptions } from '../../../src/monitors/kmsg-reader.ts';
import type { LogLine } from '../../../src/types.ts';
import { FakeClock } from '../../../src/util/clock.ts';
import { silentLogger } from '../../../src/util/logger.ts';
import { FakeKmsgDevice } from './fake-device.ts';

export const T0 = Date.UTC(2026, 0, 1);
/** The fake /proc/uptime says 1000 s, so boot was 1,000,000 ms before T0. */
export const BOOT = T0 - 1_000_000;
export const HOUR = 3_600_000;

type Overrides = Partial<Omit<KmsgReaderOptions, 'clock' | 'registry' | 'logger' | 'device'>>;

export interface Harness {
  readonly clock: FakeClock;
  readonly registry: Registry;
  readonly device: FakeKmsgDevice;
  readonly batches: LogLine[][];
  readonly reader: KmsgReader;
  messages(): string[];
}

/** Defaults to a one-hour lookback, which (uptime being 1000 s) replays the whole boot. */
export function harness(overrides: Overrides = {}, device = new FakeKmsgDevice()): Harness {
  const clock = new FakeClock(T0);
  const registry = createRegistry();
  const batches: LogLine[][] = [];
  const reader = new KmsgReader({
    clock,
    registry,
    logger: silentLogger(),
    device,
    fs: { readFileSync: () => '1000.00 1800.50\n' },
    lookbackMs: HOUR,
    onLines: (lines) => batches.push(lines),
    ...overrides,
  });
  return { clock, registry, device, batches, reader, messages: () => batches.flat().map((l) => l.message) };
}

/** A counter's value for exactly these labels (0 when never incremented). */
export async function metric(
  registry: Registry,
  name: string,
  labels: Readonly<Record<string, string>> = { source: 'kmsg' },
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

export function skipped(registry: Registry, reason: string, source = 'kmsg'): Promise<number> {
  return metric(registry, 'npd_kmsg_records_skipped_total', { source, reason });
}
