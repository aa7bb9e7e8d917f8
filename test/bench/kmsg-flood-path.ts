/**
 * The kmsg read path in one process, without the kernel: KmsgReader over a synthetic device that
 * serves routine corpus records, SourceHub, and the DaemonSet's kernel + readonly monitors. Prints
 * user-space ns per record and what the garbage collector cost, so per-record work can be compared
 * without a flood (the syscall itself, ~1.2 us of kernel time per record here, is not included).
 *
 *   node --import tsx test/bench/kmsg-flood-path.ts [records] [--v8-flags...]
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { PerformanceObserver } from 'node:perf_hooks';
import { loadConfigs } from '../../src/config/load.ts';
import { FakeClock } from '../../src/core/clock.ts';
import { silentLogger } from '../../src/core/logger.ts';
import { createRegistry } from '../../src/core/metrics.ts';
import type { KmsgDevice } from '../../src/host/clib/kmsg-snapshot.ts';
import { hostPaths } from '../../src/host/paths.ts';
import { ProblemMetrics } from '../../src/metrics/problem-metrics.ts';
import { SystemLogMonitor } from '../../src/monitors/system-log/monitor.ts';
import { systemLogConfigKind } from '../../src/monitors/system-log/schema.ts';
import type { LogMonitorConfig } from '../../src/rules/config.ts';
import { SourceHub } from '../../src/sources/hub.ts';
import { createKmsgSource } from '../../src/sources/kmsg/source.ts';
import { kernelCorpus } from './kernel-corpus.ts';

const ROOT = join(import.meta.dirname, '..', '..');
const PER_POLL = 400; // 10 ms of a 40k/s flood

/** Serves `total` records, PER_POLL per drain, then EAGAIN; the seq keeps rising like the kernel's. */
function syntheticDevice(total: number): KmsgDevice & { served: number } {
  const lines = kernelCorpus(10_000, 0).map((l) => Buffer.from(l));
  const again = Object.assign(new Error('EAGAIN'), { code: 'EAGAIN' });
  const dev = {
    served: 0,
    inPoll: 0,
    openSync: () => 3,
    closeSync: () => {},
    readSync(_fd: number, buf: Buffer): number {
      if (dev.served >= total || dev.inPoll >= PER_POLL) {
        dev.inPoll = 0;
        throw again;
      }
      dev.inPoll++;
      const n = dev.served++;
      const head = `14,${n + 1000},${(5_000_000 + n * 25).toString()},-;`;
      const len = buf.write(head, 0, 'latin1');
      const line = lines[n % lines.length] as Buffer;
      line.copy(buf, len);
      buf[len + line.length] = 0x0a;
      return len + line.length + 1;
    },
  };
  return dev;
}

function configs(): LogMonitorConfig[] {
  const files = ['rules/kernel.yaml', 'rules/readonly.yaml'].map((f) => ({ file: join(ROOT, f) }));
  return loadConfigs(files, [systemLogConfigKind], (f) => readFileSync(f, 'utf8')).map(
    (l) => ({ ...(l.config as LogMonitorConfig), lookbackMs: 0 }) as LogMonitorConfig,
  );
}

async function run(total: number): Promise<void> {
  const clock = new FakeClock(Date.now());
  const registry = createRegistry();
  const device = syntheticDevice(total);
  const hub = new SourceHub();
  const deps = { clock, registry, problemMetrics: new ProblemMetrics(registry) };
  const sourceDeps = { clock, registry, logger: silentLogger(), paths: hostPaths('/') };
  for (const c of configs()) {
    const source = hub.share('kmsg', () => createKmsgSource(c, sourceDeps, { device }));
    await new SystemLogMonitor(c, source, deps).start(() => {});
  }
  const gc = { count: 0, ms: 0, maxMs: 0 };
  const obs = new PerformanceObserver((list) => {
    for (const e of list.getEntries()) {
      gc.count++;
      gc.ms += e.duration;
      gc.maxMs = Math.max(gc.maxMs, e.duration);
    }
  });
  obs.observe({ entryTypes: ['gc'] });
  const cpu0 = process.cpuUsage();
  const t0 = process.hrtime.bigint();
  while (device.served < total) clock.advance(10);
  const ns = Number(process.hrtime.bigint() - t0);
  const cpu = process.cpuUsage(cpu0);
  await new Promise((r) => setTimeout(r, 50));
  obs.disconnect();
  console.log(
    `${total} records: ${(ns / total).toFixed(0)} ns/record wall, ${(((cpu.user + cpu.system) * 1000) / total).toFixed(0)} ns/record CPU; GC ${gc.count}x ${gc.ms.toFixed(0)} ms (${((gc.ms * 1e6) / total).toFixed(0)} ns/record), longest ${gc.maxMs.toFixed(1)} ms`,
  );
}

const total = Number(process.argv[2] ?? 2_000_000);
await run(total / 4); // warm-up
await run(total);
