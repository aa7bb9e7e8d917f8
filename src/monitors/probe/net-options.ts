import { z } from 'zod';
import { deviceInterfaces } from '../../host/procfs/netdev.ts';

/** A Linux interface name (IFNAMSIZ 16 with the NUL; no '/', no whitespace). */
export const ifname = z
  .string()
  .regex(
    /^[^/\s:]{1,15}$/,
    'must be an interface name such as eth0 (1-15 characters, no "/", ":" or spaces)',
  );

/** Interfaces named in the config, or every device-backed one when the list is empty. */
export async function chosenInterfaces(
  sys: string,
  names: readonly string[],
  signal: AbortSignal,
): Promise<readonly string[]> {
  return names.length > 0 ? names : deviceInterfaces(sys, signal);
}

export const NO_DEVICES =
  'no interface backed by a device under /sys/class/net (is the host /sys mounted and the pod on hostNetwork?); name the interfaces in `interfaces`';
