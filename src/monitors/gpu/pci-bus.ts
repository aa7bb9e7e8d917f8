import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { Gpu } from './check.ts';
import { kernelBusId } from './identity.ts';

/** PCI vendor id of NVIDIA (the PCI-SIG registry; lspci -n shows 10de). */
const NVIDIA_VENDOR = 0x10de;
/** PCI base class 0x03, display controller: VGA 0x0300, XGA 0x0301, 3D 0x0302 (data-center GPUs). */
const DISPLAY_CLASS = 0x03;

/**
 * The NVIDIA GPUs the kernel enumerated on the PCI bus, by address ("0000:3b:00.0"), read from
 * <sys>/bus/pci/devices/<addr>/{vendor,class} (Documentation/ABI/testing/sysfs-bus-pci). This is the
 * count NVML must match: a GPU the bus shows and NVML does not has fallen off the bus or failed to
 * initialise. NVSwitches and other NVIDIA bridges (class 0x068000) are not GPUs and are left out.
 * Undefined when the directory cannot be read (no sysfs): the count is then unknown, not zero.
 */
export function nvidiaGpusOnBus(sys: string): string[] | undefined {
  const dir = join(sys, 'bus', 'pci', 'devices');
  let entries: string[];
  try {
    entries = readdirSync(dir);
  } catch {
    return undefined;
  }
  return entries.filter((addr) => isNvidiaGpu(join(dir, addr))).sort();
}

/**
 * The NVIDIA GPUs on the PCI bus (`onBus`, sysfs's "0000:3b:00.0") that are none of `gpus` (NVML's
 * "00000000:3B:00.0"), both written the kernel log's way ("0000:3b:00") so that they compare.
 */
export function notEnumerated(onBus: readonly string[], gpus: readonly Gpu[]): string[] {
  const seen = new Set(gpus.map((g) => kernelBusId(g.busId)));
  return onBus.map(kernelBusId).filter((b) => !seen.has(b));
}

function isNvidiaGpu(device: string): boolean {
  const vendor = readHex(join(device, 'vendor'));
  const cls = readHex(join(device, 'class'));
  return vendor === NVIDIA_VENDOR && cls !== undefined && cls >> 16 === DISPLAY_CLASS;
}

function readHex(file: string): number | undefined {
  try {
    const n = Number.parseInt(readFileSync(file, 'utf8').trim(), 16);
    return Number.isNaN(n) ? undefined : n;
  } catch {
    return undefined;
  }
}
