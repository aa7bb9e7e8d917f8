import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { Registry } from 'prom-client';
import {
  type ProcessInfo,
  realProcessInfo,
  registerProcessMetrics,
} from '../../../src/metrics/process-metrics.ts';

function fakeInfo(): ProcessInfo & { cpu: { user: number; system: number } } {
  const cpu = { user: 1_500_000, system: 500_000 };
  return {
    cpu,
    cpuUsage: () => ({ ...cpu }),
    startTimeSeconds: () => 1_700_000_000,
    status: () => 'Name:\tnode\nVmSize:\t  200000 kB\nVmRSS:\t   51200 kB\nVmData:\t   30000 kB\n',
    openFds: () => 17,
    limits: () =>
      'Limit                     Soft Limit           Hard Limit           Units\nMax open files            1048576              1048576              files\n',
  };
}

async function values(registry: Registry): Promise<Record<string, number>> {
  const out: Record<string, number> = {};
  for (const m of await registry.getMetricsAsJSON()) out[m.name] = m.values[0]?.value ?? Number.NaN;
  return out;
}

describe('process metrics', () => {
  it('reads the standard process_* values at scrape time', async () => {
    const registry = new Registry();
    const info = fakeInfo();
    registerProcessMetrics(registry, info);
    assert.deepEqual(await values(registry), {
      process_cpu_user_seconds_total: 1.5,
      process_cpu_system_seconds_total: 0.5,
      process_cpu_seconds_total: 2,
      process_start_time_seconds: 1_700_000_000,
      process_resident_memory_bytes: 51200 * 1024,
      process_virtual_memory_bytes: 200000 * 1024,
      process_heap_bytes: 30000 * 1024,
      process_open_fds: 17,
      process_max_fds: 1_048_576,
    });
    info.cpu.user += 250_000;
    const next = await values(registry);
    assert.equal(next.process_cpu_user_seconds_total, 1.75, 'counters grow by what the process used since');
    assert.equal(next.process_cpu_seconds_total, 2.25);
  });

  it('registers once per registry, and reads this process for real', async () => {
    const registry = new Registry();
    registerProcessMetrics(registry);
    registerProcessMetrics(registry);
    const v = await values(registry);
    const get = (name: string) => v[name] ?? Number.NaN;
    assert.ok(get('process_resident_memory_bytes') > 1024 * 1024, 'RSS above 1 MiB');
    assert.ok(get('process_open_fds') > 0 && get('process_open_fds') <= get('process_max_fds'));
    assert.ok(Math.abs(get('process_start_time_seconds') - realProcessInfo().startTimeSeconds()) <= 1);
  });
});
