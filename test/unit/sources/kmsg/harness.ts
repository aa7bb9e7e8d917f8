import type { Registry } from 'prom-client';
import { FakeClock } from '../../../../src/core/clock.ts';
import type { LogLine } from '../../../../src/core/types.ts';
import { KmsgReader, type KmsgReaderOptions } from '../../../../src/sources/kmsg/reader.ts';
import { FakeKmsgDevice } from '../../../support/fake-kmsg-device.ts';
import { counterReader, HOUR, readerDeps } from '../../../support/fake-reader-harness.ts';

export { HOUR } from '../../../support/fake-reader-harness.ts';

export const T0 = Date.UTC(2026, 0, 1);
/** The fake /proc/uptime says 1000 s, so boot was 1,000,000 ms before T0. */
export const BOOT = T0 - 1_000_000;

type Overrides = Partial<Omit<KmsgReaderOptions, 'clock' | 'registry' | 'device'>>;

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
  const deps = readerDeps(new FakeClock(T0));
  const batches: LogLine[][] = [];
  const reader = new KmsgReader({
    ...deps,
    device,
    fs: { readFileSync: () => '1000.00 1800.50\n' },
    lookbackMs: HOUR,
    onLines: (lines) => batches.push(lines),
    ...overrides,
  });
  const messages = () => batches.flat().map((l) => l.message);
  return { clock: deps.clock, registry: deps.registry, device, batches, reader, messages };
}

/** A counter's value for exactly these labels, by default `{ source: 'kmsg' }` (0 when never incremented). */
export const metric = counterReader('kmsg');

export function skipped(registry: Registry, reason: string, source = 'kmsg'): Promise<number> {
  return metric(registry, 'npd_kmsg_records_skipped_total', { source, reason });
}
