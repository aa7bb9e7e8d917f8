import type { Gpu } from './check.ts';

/**
 * NVML's bus id "00000000:3B:00.0" (nvmlPciInfo_t.busId: 8-digit domain, upper case, function) as the
 * kernel log names the GPU, "0000:3b:00" (open-gpu-kernel-modules kernel_rc.c prints
 * "NVRM: Xid (PCI:%04x:%02x:%02x ...)"), so an Xid from either source has one identity. Anything else
 * is returned lower-cased, unchanged.
 */
export function kernelBusId(nvmlBusId: string): string {
  const m = /^([0-9a-fA-F]{4,8}):([0-9a-fA-F]{2}):([0-9a-fA-F]{2})(?:\.[0-7])?$/.exec(nvmlBusId.trim());
  if (!m) return nvmlBusId.trim().toLowerCase();
  // %04x: at least four digits, more for a domain above 0xffff (VMD, some hypervisors).
  const domain = Number.parseInt(m[1] as string, 16)
    .toString(16)
    .padStart(4, '0');
  return `${domain}:${m[2]}:${m[3]}`.toLowerCase();
}

/** "GPU 0 (0000:3b:00, GPU-7f0c…, NVIDIA H200)": every finding names its GPU this way. */
export function describeGpu(gpu: Gpu): string {
  return `GPU ${gpu.index} (${kernelBusId(gpu.busId)}, ${gpu.uuid}, ${gpu.name})`;
}
