import type { Logger } from '../../core/logger.ts';
import type { GpuMonitorConfig } from './schema.ts';

/** The extended resource NVIDIA's device plugin (k8s-device-plugin) registers whole GPUs as. */
export const GPU_RESOURCE = 'nvidia.com/gpu';

/**
 * --gpu-expected-count over the config: the device-count check's expectedCount (and the config's
 * top-level field, for what the config says it expects). Undefined or 0: the config as it is.
 */
export function withExpectedCount(config: GpuMonitorConfig, flag: number | undefined): GpuMonitorConfig {
  if (!flag) return config;
  const own = config.checks['device-count'];
  if (!own) return config;
  const options = { ...(own.options as object), expectedCount: flag };
  return {
    ...config,
    expectedCount: flag,
    checks: { ...config.checks, 'device-count': { ...own, options } },
  };
}

/**
 * The Node's `nvidia.com/gpu` capacity for `expectedCountFrom: node`, read at each poll through the
 * agent's late-bound source (the exporter fetches the Node after the monitors start; none without a
 * cluster). Whether it is known is logged once each time that changes, so a standalone agent says once
 * that the check compares NVML with the PCI bus only. Capacity "0" is the kubelet's value after the
 * device plugin left (it zeroes a resource whose plugin stayed away past the grace period), and any
 * other non-integer quantity is unreadable: both count as unknown, never as "expect no GPU".
 */
export class NodeGpuCapacity {
  private readonly source: ((resource: string) => string | undefined) | undefined;
  private readonly logger: Logger;
  private readonly monitor: string;
  private told: number | 'unknown' | undefined;

  constructor(
    source: ((resource: string) => string | undefined) | undefined,
    logger: Logger,
    monitor: string,
  ) {
    this.source = source;
    this.logger = logger;
    this.monitor = monitor;
  }

  read(): number | undefined {
    const raw = this.source?.(GPU_RESOURCE);
    const n = raw !== undefined && /^\d+$/.test(raw) ? Number(raw) : 0;
    const now = n > 0 ? n : 'unknown';
    if (now !== this.told) this.tell(now, raw);
    this.told = now;
    return n > 0 ? n : undefined;
  }

  private tell(now: number | 'unknown', raw: string | undefined): void {
    const log = { source: this.monitor, resource: GPU_RESOURCE, capacity: raw ?? null };
    if (now === 'unknown')
      this.logger.info(
        log,
        `device-count: the Node's ${GPU_RESOURCE} capacity is not known (no cluster, the Node not fetched yet, or no device plugin registered); NVML is compared with the PCI bus only`,
      );
    else
      this.logger.info(
        log,
        `device-count: NVML is compared with the Node's ${GPU_RESOURCE} capacity, ${now}`,
      );
  }
}
