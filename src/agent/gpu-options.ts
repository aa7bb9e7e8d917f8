import type { FlagSpec } from '../config/flag-parser.ts';
import { type FlagReader, I } from './flag-specs.ts';

/** The GPU monitor's flags (docs/rules.md, "GPU health from NVML"). NPD has no GPU monitor. */
export interface GpuOptions {
  /**
   * --gpu-expected-count: the GPUs this node must have (its instance type's count), over every nvml
   * config's expectedCount, so one DaemonSet per node pool sets it without a config file of its own;
   * 0 (the default) keeps the configs'.
   */
  readonly gpuExpectedCount?: number;
}

export const GPU_FLAGS: readonly FlagSpec[] = [
  I(
    'gpu-expected-count',
    "GPUs this node must have, over the nvml configs' expectedCount (fewer in NVML: NvidiaDeviceCountMismatch); 0 keeps theirs",
    0,
  ),
];

export function gpuOptions(f: FlagReader): GpuOptions {
  const n = f.num('gpu-expected-count');
  if (Number.isInteger(n) && n >= 0) return { gpuExpectedCount: n };
  f.errors.push(`--gpu-expected-count must be a whole number of GPUs, not ${n}`);
  return { gpuExpectedCount: 0 };
}
