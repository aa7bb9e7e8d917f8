import { mkdirSync, mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Registry } from 'prom-client';
import { FakeClock } from '../../../../src/core/clock.ts';
import { silentLogger } from '../../../../src/core/logger.ts';
import { createRegistry } from '../../../../src/core/metrics.ts';
import type { Status } from '../../../../src/core/types.ts';
import type { NvmlLoader } from '../../../../src/host/nvml/api.ts';
import { hostPaths } from '../../../../src/host/paths.ts';
import { ProblemMetrics } from '../../../../src/metrics/problem-metrics.ts';
import type { MonitorDeps } from '../../../../src/monitors/deps.ts';
import { GPU_CHECKS } from '../../../../src/monitors/gpu/checks/index.ts';
import { GpuMonitor } from '../../../../src/monitors/gpu/monitor.ts';
import { type GpuMonitorConfig, validateGpuMonitor } from '../../../../src/monitors/gpu/schema.ts';
import { type MemoryGpu, MemoryNvml } from '../../../support/nvml-memory.ts';

/** A host root whose /sys/bus/pci/devices shows `addresses` as NVIDIA 3D controllers. */
export function pciRoot(
  addresses: readonly string[],
  other: readonly [string, string, string][] = [],
): string {
  const root = mkdtempSync(join(tmpdir(), 'npd-gpu-'));
  const dir = join(root, 'sys', 'bus', 'pci', 'devices');
  mkdirSync(dir, { recursive: true });
  const add = (addr: string, vendor: string, cls: string) => {
    mkdirSync(join(dir, addr));
    writeFileSync(join(dir, addr, 'vendor'), `${vendor}\n`);
    writeFileSync(join(dir, addr, 'class'), `${cls}\n`);
  };
  for (const a of addresses) add(a, '0x10de', '0x030200');
  for (const [a, vendor, cls] of other) add(a, vendor, cls);
  return root;
}

export function gpuConfig(raw: Record<string, unknown> = {}): GpuMonitorConfig {
  const { config, issues } = validateGpuMonitor({ plugin: 'nvml', ...raw }, 'gpu-nvml.yaml', GPU_CHECKS);
  if (!config) throw new Error(issues.map((i) => `${i.path}: ${i.message}`).join('\n'));
  return config;
}

/** The monitor with a fake clock, the in-memory NVML and everything it emits. */
export class Harness {
  readonly clock = new FakeClock(Date.UTC(2026, 11, 5));
  readonly registry: Registry = createRegistry();
  readonly nvml: MemoryNvml;
  readonly seen: Status[] = [];
  readonly monitor: GpuMonitor;
  loads = 0;

  constructor(
    opts: {
      gpus?: MemoryGpu[];
      config?: Record<string, unknown>;
      loader?: NvmlLoader;
      root?: string;
      /** MemoryDeps beyond the defaults: nodeCapacity, gpuExpectedCount, a logger. */
      deps?: Partial<MonitorDeps>;
    } = {},
  ) {
    this.nvml = new MemoryNvml(this.clock, opts.gpus);
    const root = opts.root ?? pciRoot((opts.gpus ?? [null]).map((_, i) => `0000:${hex(i)}:00.0`));
    const loader: NvmlLoader =
      opts.loader ??
      (() => {
        this.loads++;
        return this.nvml;
      });
    const deps = {
      clock: this.clock,
      logger: silentLogger(),
      registry: this.registry,
      problemMetrics: new ProblemMetrics(this.registry),
      paths: hostPaths(root),
      ...opts.deps,
    };
    this.monitor = new GpuMonitor(gpuConfig(opts.config), deps, loader, GPU_CHECKS);
  }

  async start(): Promise<void> {
    await this.monitor.start((s) => this.seen.push(s));
    await settle();
  }

  /** stop() waits for the event wait in flight, which ends within one wait (1 s on the fake clock). */
  async stop(): Promise<void> {
    const stopping = this.monitor.stop();
    await this.advance(1000);
    await stopping;
  }

  /** Advances the fake clock and lets the event wait's promises run. */
  async advance(ms: number): Promise<void> {
    this.clock.advance(ms);
    await settle();
  }

  last(): Status | undefined {
    return this.seen[this.seen.length - 1];
  }

  condition() {
    return this.last()?.conditions.find((c) => c.type === 'GPUUnhealthy');
  }

  events() {
    return this.seen.flatMap((s) => s.events);
  }

  async metric(name: string): Promise<string[]> {
    const text = await this.registry.metrics();
    return text.split('\n').filter((l) => l.startsWith(name));
  }
}

export function hex(i: number): string {
  return i.toString(16).padStart(2, '0');
}

/** Lets pending promise callbacks and immediates run (no timers: the clock is fake). */
export async function settle(): Promise<void> {
  for (let i = 0; i < 5; i++) await new Promise((r) => setImmediate(r));
}
