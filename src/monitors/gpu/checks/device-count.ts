import { z } from 'zod';
import { NvmlError } from '../../../host/nvml/api.ts';
import type { GpuCheck } from '../check.ts';
import { notEnumerated, nvidiaGpusOnBus } from '../pci-bus.ts';
import { unanswered } from './ecc.ts';

/** The EKS node monitoring agent's fatal reason (pkg/reasons/reasons.yaml). */
export const DEVICE_COUNT_MISMATCH = 'NvidiaDeviceCountMismatch';

/**
 * `expectedCount`: the GPUs the node must have; the config's top-level `expectedCount` (or the flag
 * --gpu-expected-count) fills it. `expectedCountFrom: node`: also expect the Node's `nvidia.com/gpu`
 * capacity (off by default; see compareNode).
 */
export const deviceCountOptions = z.strictObject({
  expectedCount: z.number().int().min(1).optional(),
  expectedCountFrom: z.enum(['node']).optional(),
});
export type DeviceCountOptions = z.infer<typeof deviceCountOptions>;

/**
 * NVML's GPU count against the NVIDIA display/3D controllers the kernel enumerated on the PCI bus, and
 * against the expected count when one is configured. Fewer in NVML than on the bus means a GPU fell off
 * the bus or failed to initialise (EKS compares DCGM's count with /dev/nvidia[0-9]* and its instance-type
 * table: monitors/nvidia/dcgm_devices.go; AKS's GPUMissing compares nvidia-smi with the SKU's count).
 * More on the bus than NVML sees is a fault; more in NVML than on the bus is not judged (a /sys that is
 * not the host's). Without a readable /sys/bus/pci the bus comparison is skipped, not failed.
 */
export const deviceCountCheck: GpuCheck<DeviceCountOptions, null> = {
  name: 'device-count',
  scope: 'node',
  options: deviceCountOptions,
  reasons: { fatal: [DEVICE_COUNT_MISMATCH] },
  initialState: () => null,
  run(ctx) {
    const count = ctx.nvml.deviceCount();
    if (count instanceof NvmlError) return unanswered(count);
    const bus = ctx.paths ? nvidiaGpusOnBus(ctx.paths.sys) : undefined;
    const problems: string[] = [];
    if (bus && bus.length > count) {
      // Which GPU is gone is what the operator needs first: name the bus's GPUs NVML did not enumerate.
      const missing = ctx.gpus ? notEnumerated(bus, ctx.gpus) : [];
      const named = missing.length > 0 ? `; not enumerated by NVML: ${missing.join(', ')}` : '';
      problems.push(
        `the PCI bus shows ${bus.length} NVIDIA GPUs (${bus.join(', ')}) and NVML sees ${count}${named}`,
      );
    }
    const expected = ctx.options.expectedCount;
    if (expected !== undefined && count !== expected)
      problems.push(`NVML sees ${count} GPUs, ${expected} expected`);
    if (ctx.options.expectedCountFrom === 'node') problems.push(...compareNode(count, ctx.nodeGpuCapacity));
    if (problems.length === 0) return { findings: [] };
    const message = `${problems.join('; ')}: a GPU fell off the bus or failed to initialise`;
    return {
      findings: [{ check: 'device-count', severity: 'fatal', reason: DEVICE_COUNT_MISMATCH, message }],
    };
  },
};

/**
 * NVIDIA's device plugin registers the GPUs NVML showed it when it started, and the kubelet publishes
 * them as the Node's `nvidia.com/gpu` capacity, healthy or not (kubelet pkg/kubelet/cm/devicemanager
 * manager.go GetCapacity: capacity = healthy + unhealthy devices; allocatable = healthy). So fewer in
 * NVML than the capacity is a GPU lost since the plugin registered it. A GPU lost before the plugin
 * started is in neither count: only expectedCount (the instance type's) or the PCI bus catches it, and
 * the capacity a restarted plugin lowers is itself visible to the scheduler and to whoever watches the
 * Node. More in NVML than the capacity is not judged (a plugin limited to some GPUs, MIG GPUs under the
 * mixed strategy). Unknown capacity (no cluster, not fetched yet, no plugin): no finding from it.
 * Only where `nvidia.com/gpu` counts whole GPUs: time-slicing replicas under that name, or MIG's single
 * strategy, make the capacity count replicas or MIG devices (docs/rules.md says so).
 */
function compareNode(count: number, capacity: number | undefined): string[] {
  if (capacity === undefined || count >= capacity) return [];
  return [
    `the Node's nvidia.com/gpu capacity is ${capacity} (the GPUs the device plugin registered) and NVML sees ${count}`,
  ];
}
