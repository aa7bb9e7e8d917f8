import { type DeviceHandle, NVML, type Nvml, NvmlError } from '../../host/nvml/api.ts';
import type { Gpu } from './check.ts';

/** What starting NVML found: the GPUs, nothing to watch here, or NVML failing. */
export type Startup =
  | { readonly kind: 'ready'; readonly gpus: readonly Gpu[]; readonly lost: readonly Gpu[] }
  | { readonly kind: 'no_gpu'; readonly why: string }
  | { readonly kind: 'failed'; readonly error: NvmlError };

/**
 * Init codes that mean "no NVIDIA driver here" rather than "the driver is broken": on a node whose PCI
 * bus shows no NVIDIA GPU they are the normal answer of a library the image ships without a GPU.
 */
const NO_DRIVER: ReadonlySet<number> = new Set([NVML.DRIVER_NOT_LOADED, NVML.LIBRARY_NOT_FOUND]);

/**
 * nvmlInit_v2, the count and each GPU's identity (handle, UUID, name, PCI bus id). `onBus` is how many
 * NVIDIA GPUs the PCI bus shows (undefined: unknown): with none there, no driver or no device is not a
 * fault. A GPU answering GPU_IS_LOST is kept, as lost, so its finding names it; any other error fails.
 */
export function startNvml(nvml: Nvml, onBus: number | undefined): Startup {
  const init = nvml.init();
  if (init instanceof NvmlError) {
    if (NO_DRIVER.has(init.code) && !onBus)
      return { kind: 'no_gpu', why: `no NVIDIA driver (${init.message})` };
    return { kind: 'failed', error: init };
  }
  const count = nvml.deviceCount();
  if (count instanceof NvmlError) return { kind: 'failed', error: count };
  if (count === 0 && !onBus) return { kind: 'no_gpu', why: 'NVML sees no NVIDIA GPU' };
  const gpus: Gpu[] = [];
  const lost: Gpu[] = [];
  for (let index = 0; index < count; index++) {
    const g = identify(nvml, index);
    if (g instanceof NvmlError) {
      if (g.code !== NVML.GPU_IS_LOST) return { kind: 'failed', error: g };
      lost.push(unknownGpu(index));
    } else gpus.push(g);
  }
  return { kind: 'ready', gpus, lost };
}

function identify(nvml: Nvml, index: number): Gpu | NvmlError {
  const handle = nvml.handle(index);
  if (handle instanceof NvmlError) return handle;
  const uuid = nvml.uuid(handle);
  if (uuid instanceof NvmlError) return uuid;
  const name = nvml.name(handle);
  if (name instanceof NvmlError) return name;
  const pci = nvml.pciInfo(handle);
  if (pci instanceof NvmlError) return pci;
  return { index, handle, uuid, name, busId: pci.busId };
}

/** A GPU lost before NVML told its identity: named by index only. */
function unknownGpu(index: number): Gpu {
  const handle: DeviceHandle = { index };
  return { index, handle, uuid: 'unknown', name: 'unknown', busId: 'unknown' };
}
