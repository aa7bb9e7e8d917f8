/** Fake /proc, /sys and /etc contents for the collector tests, relative to a host root. */

export const LOADAVG = '0.52 0.58 0.61 2/1234 5678\n';

/** USER_HZ ticks: cpu0 + cpu1 = cpu. */
export function procStat(scale = 1): string {
  const line = (name: string, v: number[]) => `${name} ${v.map((x) => x * scale).join(' ')}`;
  return [
    line('cpu ', [1000, 20, 300, 50000, 40, 0, 10, 5, 0, 0]),
    line('cpu0', [600, 10, 150, 25000, 20, 0, 5, 2, 0, 0]),
    line('cpu1', [400, 10, 150, 25000, 20, 0, 5, 3, 0, 0]),
    `intr ${123456 * scale} 1 2 3`,
    'ctxt 99999',
    'btime 1767225600',
    `processes ${4242 * scale}`,
    'procs_running 3',
    'procs_blocked 1',
    'softirq 1 2 3',
    '',
  ].join('\n');
}

export const MEMINFO = [
  'MemTotal:       16000000 kB',
  'MemFree:         4000000 kB',
  'MemAvailable:    9000000 kB',
  'Buffers:          500000 kB',
  'Cached:          3000000 kB',
  'SwapCached:            0 kB',
  'Active:          6000000 kB',
  'Inactive:        3000000 kB',
  'Active(anon):    4000000 kB',
  'Inactive(anon):   100000 kB',
  'Active(file):    2000000 kB',
  'Inactive(file):  2900000 kB',
  'Unevictable:       12345 kB',
  'Dirty:               400 kB',
  'Writeback:             8 kB',
  'Slab:             500000 kB',
  'HugePages_Total:       0',
  '',
].join('\n');

export const OS_RELEASE_UBUNTU = [
  'PRETTY_NAME="Ubuntu 22.04.4 LTS"',
  'NAME="Ubuntu"',
  'VERSION_ID="22.04"',
  'VERSION="22.04.4 LTS (Jammy Jellyfish)"',
  'ID=ubuntu',
  '',
].join('\n');

export const OS_RELEASE_COS = [
  'BUILD_ID=11647.217.0',
  'NAME="Container-Optimized OS"',
  'VERSION=73',
  'ID=cos',
  '',
].join('\n');

export function netDev(scale = 1): string {
  const row = (name: string, base: number) =>
    `${name.padStart(6)}: ${Array.from({ length: 16 }, (_, i) => (base + i) * scale).join(' ')}`;
  return [
    'Inter-|   Receive                                                |  Transmit',
    ' face |bytes    packets errs drop fifo frame compressed multicast|bytes    packets errs drop fifo colls carrier compressed',
    row('lo', 100),
    row('eth0', 1000),
    row('veth12ab', 5000),
    row('cali0', 7000),
    '',
  ].join('\n');
}

export const CMDLINE =
  'BOOT_IMAGE=/vmlinuz root=/dev/sda1 csm.enabled=1 systemd.unified_cgroup_hierarchy=1 module.sig_enforce=1 loadpin.enabled=1 dm="1 vroot none ro 1,0 4077568 verity"\n';

export const MODULES = [
  'nvidia 35000000 0 - Live 0xffffffffc0000000 (POE)',
  'mydriver 16384 0 - Live 0xffffffffc1000000 (O)',
  'vendor_blob 16384 0 - Live 0xffffffffc1100000 (P)',
  'xt_MASQUERADE 16384 1 - Live 0xffffffffc2000000 (O)',
  'ext4 700000 1 - Live 0xffffffffc3000000',
  '',
].join('\n');

/** reads merged sectors ms writes merged sectors ms inflight io_ms weighted_ms, then discard fields. */
export function diskstats(scale = 1): string {
  const row = (maj: number, min: number, name: string, v: number[]) =>
    `${String(maj).padStart(4)} ${String(min).padStart(7)} ${name} ${v.map((x) => x * scale).join(' ')} 0 0 0 0`;
  return [
    row(8, 0, 'sda', [1000, 10, 2000, 500, 2000, 20, 4000, 800, 0, 1200, 1300]),
    row(8, 1, 'sda1', [900, 9, 1800, 450, 1900, 19, 3800, 780, 0, 1100, 1230]),
    row(259, 0, 'nvme0n1', [50, 0, 100, 5, 0, 0, 0, 0, 0, 5, 5]),
    row(7, 0, 'loop0', [0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0]),
    row(7, 1, 'loop1', [3, 0, 6, 1, 0, 0, 0, 0, 0, 1, 1]),
    row(1, 0, 'ram0', [0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0]),
    '',
  ].join('\n');
}

export const MOUNTINFO = [
  '22 1 8:1 / / rw,relatime shared:1 - ext4 /dev/sda1 rw,errors=remount-ro',
  '23 22 0:21 / /proc rw,nosuid,nodev,noexec - proc proc rw',
  '24 22 8:1 /var/lib/kubelet /var/lib/kubelet rw,relatime shared:2 - ext4 /dev/sda1 rw',
  '25 22 0:5 / /dev rw,nosuid - devtmpfs udev rw,size=8000000k',
  '26 22 8:16 / /mnt/my\\040data rw,noatime - xfs /dev/root rw',
  '27 22 0:40 / /run rw - tmpfs tmpfs rw',
  '',
].join('\n');

export const FILESYSTEMS = 'nodev\tsysfs\nnodev\tproc\nnodev\ttmpfs\nnodev\tdevtmpfs\n\text4\n\txfs\n';

/** Everything every collector reads, for a host whose root is the fake root. */
export function fullHost(): Record<string, string> {
  return {
    'proc/loadavg': LOADAVG,
    'proc/stat': procStat(),
    'proc/meminfo': MEMINFO,
    'proc/uptime': '12345.67 54321.00\n',
    'proc/sys/kernel/osrelease': '6.1.0-17-amd64\n',
    'etc/os-release': OS_RELEASE_UBUNTU,
    'proc/net/dev': netDev(),
    'proc/cmdline': CMDLINE,
    'proc/modules': MODULES,
    'proc/diskstats': diskstats(),
    'proc/1/mountinfo': MOUNTINFO,
    'proc/filesystems': FILESYSTEMS,
    'sys/block/sda/dev': '8:0\n',
    'sys/block/nvme0n1/dev': '259:0\n',
    'sys/block/loop1/dev': '7:1\n',
    'sys/block/ram0/dev': '1:0\n',
    // A real directory for the mount point, for tests that use the real statfs(2).
    'mnt/my data/.keep': '',
  };
}
