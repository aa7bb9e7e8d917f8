import { lstat, readdir, readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { errorCode } from '../../core/errors.ts';

/**
 * Readers for /sys/class/net/<if>/. Sysfs shows the devices of the reader's network namespace
 * (`ip netns exec` remounts it), so a pod needs hostNetwork for these to describe the node.
 */

export interface LinkState {
  /** RFC 2863 operstate: up, down, lowerlayerdown, dormant, notpresent, testing or unknown. */
  readonly operstate: string;
  /** The carrier flag; undefined while the device is administratively down (the kernel says EINVAL). */
  readonly carrier: boolean | undefined;
  /** Carrier transitions since the device was created (up and down each count one). */
  readonly carrierChanges: bigint | undefined;
}

export function netDir(sys: string, ifname: string): string {
  return join(sys, 'class', 'net', ifname);
}

async function optional(path: string, signal?: AbortSignal): Promise<string | undefined> {
  try {
    return (await readFile(path, { encoding: 'utf8', signal })).trim();
  } catch (err) {
    const code = errorCode(err);
    if (code === 'ENOENT' || code === 'EINVAL') return undefined;
    throw err;
  }
}

/** The link state of one interface, or undefined when it does not exist. */
export async function readLink(
  sys: string,
  ifname: string,
  signal?: AbortSignal,
): Promise<LinkState | undefined> {
  const dir = netDir(sys, ifname);
  const operstate = await optional(join(dir, 'operstate'), signal);
  if (operstate === undefined) return undefined;
  const carrier = await optional(join(dir, 'carrier'), signal);
  const changes = await optional(join(dir, 'carrier_changes'), signal);
  return {
    operstate,
    carrier: carrier === undefined ? undefined : carrier === '1',
    carrierChanges: changes !== undefined && /^\d+$/.test(changes) ? BigInt(changes) : undefined,
  };
}

/** An interface counts as up when its operstate says so, or says unknown while it has carrier. */
export function isUp(link: LinkState): boolean {
  return link.operstate === 'up' || (link.operstate === 'unknown' && link.carrier === true);
}

/** One counter of statistics/ (rtnl_link_stats64), or undefined when the file is absent. */
export async function readStatistic(
  sys: string,
  ifname: string,
  counter: string,
  signal?: AbortSignal,
): Promise<bigint | undefined> {
  const text = await optional(join(netDir(sys, ifname), 'statistics', counter), signal);
  if (text === undefined) return undefined;
  if (!/^\d+$/.test(text))
    throw new Error(`${ifname} statistics/${counter}: not a counter: ${JSON.stringify(text)}`);
  return BigInt(text);
}

/**
 * Interfaces backed by a device (a `device` link: PCI, virtio, ENA, gVNIC), i.e. not lo, veth,
 * bridges, tunnels or CNI-created devices, sorted by name.
 */
export async function deviceInterfaces(sys: string, signal?: AbortSignal): Promise<string[]> {
  signal?.throwIfAborted();
  const base = join(sys, 'class', 'net');
  const names = await readdir(base);
  const out: string[] = [];
  for (const name of names) {
    // One lstat per interface: a node with hundreds of pod veths pays little.
    const device = await lstat(join(base, name, 'device')).then(
      () => true,
      () => false,
    );
    if (device) out.push(name);
  }
  return out.sort();
}
