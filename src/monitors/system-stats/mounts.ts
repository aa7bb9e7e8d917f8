import { readdir, readlink, realpath } from 'node:fs/promises';
import { basename, join } from 'node:path';
import { errorCode } from '../../core/errors.ts';
import { readText } from '../../host/procfs/proc.ts';
import type { StatsEnv } from './common.ts';

/** A mounted file system as NPD's disk collector sees it (gopsutil's disk.Partitions(false)). */
export interface Partition {
  /** "/dev/sda1"; /dev/root and /dev/mapper/* are resolved to the kernel's name ("/dev/dm-0"). */
  readonly device: string;
  readonly mountpoint: string;
  readonly fstype: string;
  /** Per-mount options, plus "bind" for a mount of a subdirectory, as gopsutil reports them. */
  readonly opts: readonly string[];
  /** "major:minor" of the device. */
  readonly devno: string;
}

/** mountinfo escapes space, tab, newline and backslash as octal (\040 ...). */
function unescapeOctal(text: string): string {
  return text.replace(/\\([0-7]{3})/g, (_, oct: string) => String.fromCharCode(Number.parseInt(oct, 8)));
}

/** Parses /proc/<pid>/mountinfo: "id parent maj:min root mountpoint opts [optional...] - fstype source superopts". */
export function parseMountinfo(text: string): Partition[] {
  const out: Partition[] = [];
  for (const line of text.split('\n')) {
    const sep = line.indexOf(' - ');
    if (sep < 0) continue;
    const left = line.slice(0, sep).split(' ');
    const [fstype, source] = line.slice(sep + 3).split(' ');
    const [, , devno, root, mountpoint, opts] = left;
    if (!devno || !root || !mountpoint || !opts || !fstype || !source) continue;
    const options = opts.split(',');
    if (root !== '/') options.push('bind');
    out.push({
      device: unescapeOctal(source),
      mountpoint: unescapeOctal(mountpoint),
      fstype,
      opts: options,
      devno,
    });
  }
  return out;
}

/** Block-device file systems from /proc/filesystems: those not marked nodev, plus zfs as gopsutil adds. */
export function parseFilesystems(text: string): Set<string> {
  const out = new Set<string>();
  for (const line of text.split('\n')) {
    if (!line.startsWith('nodev')) {
      if (line.trim() !== '') out.add(line.trim());
    } else if (line.split('\t')[1]?.trim() === 'zfs') {
      out.add('zfs');
    }
  }
  return out;
}

/** The host's mount table, from PID 1 so the agent's own container mounts do not count. */
async function readMountinfo(env: StatsEnv): Promise<string> {
  try {
    return await readText(env.mountinfo);
  } catch (err) {
    if (errorCode(err) !== 'ENOENT' && errorCode(err) !== 'EACCES') throw err;
    return readText(join(env.proc, 'self', 'mountinfo'));
  }
}

/** gopsutil maps these pseudo names to the kernel's device name; unresolvable ones are kept as they are. */
async function resolveDevice(p: Partition, env: StatsEnv): Promise<string> {
  try {
    if (p.device.startsWith('/dev/mapper/')) {
      return `/dev/${basename(await realpath(join(env.paths.dev, p.device.slice('/dev/'.length))))}`;
    }
    if (p.device === '/dev/root') {
      return `/dev/${basename(await readlink(join(env.paths.sys, 'dev', 'block', p.devno)))}`;
    }
  } catch {
    // Kept unresolved, as gopsutil does.
  }
  return p.device;
}

/** Mounted block-device file systems ("none" sources and pseudo file systems left out). */
export async function physicalPartitions(env: StatsEnv): Promise<Partition[]> {
  const [mountinfo, filesystems] = await Promise.all([
    readMountinfo(env),
    readText(join(env.proc, 'filesystems')),
  ]);
  const physical = parseFilesystems(filesystems);
  const out: Partition[] = [];
  for (const p of parseMountinfo(mountinfo)) {
    if (p.device === 'none' || !physical.has(p.fstype)) continue;
    out.push({ ...p, device: await resolveDevice(p, env) });
  }
  return out;
}

/**
 * What `lsblk -d -n -o NAME` prints, read from /sys/block instead of running lsblk: every top-level
 * block device (no partitions, no holders), without RAM disks (major 1), which lsblk hides by default.
 */
export async function rootBlockDevices(sys: string): Promise<string[]> {
  const names = await readdir(join(sys, 'block'));
  const out: string[] = [];
  for (const name of names.sort()) {
    const devno = await readText(join(sys, 'block', name, 'dev')).catch(() => '');
    if (devno.trim().startsWith('1:')) continue;
    out.push(name);
  }
  return out;
}
