import assert from 'node:assert/strict';
import { mkdir, symlink } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { parseDiskstats } from '../../../../src/monitors/system-stats/disk.ts';
import { parseMountinfo } from '../../../../src/monitors/system-stats/mounts.ts';
import { parseCmdline, parseModules } from '../../../../src/monitors/system-stats/os-feature.ts';
import {
  enable,
  FIXTURES,
  fakeHost,
  fakeStatfs,
  harness,
  seriesValue,
  statsConfig,
  writeFiles,
} from './helpers.ts';
import { CMDLINE, diskstats, FILESYSTEMS, fullHost, MODULES, MOUNTINFO, netDev } from './proc-trees.ts';

const DISK_IO = [
  'disk/io_time',
  'disk/weighted_io',
  'disk/avg_queue_len',
  'disk/operation_count',
  'disk/merged_operation_count',
  'disk/operation_bytes_count',
  'disk/operation_time',
];

const devicesOf = async (h: ReturnType<typeof harness>, name: string) =>
  [...new Set((await h.series(name)).map((l) => /device_name="([^"]+)"/.exec(l)?.[1]))].sort();

describe('disk collector: I/O', () => {
  it('reads whole disks from /sys/block (no lsblk) and mounted partitions, counting since start', async () => {
    const host = await fakeHost(fullHost());
    const disk = { ...enable(...DISK_IO), includeRootBlk: true, includeAllAttachedBlk: true };
    const h = harness(statsConfig({ disk }), host);
    await h.start();
    // /sys/block without the RAM disk, plus sda1 from the mount table; loop0 never did I/O.
    assert.deepEqual(await devicesOf(h, 'disk_operation_count'), ['loop1', 'nvme0n1', 'sda', 'sda1']);
    assert.equal(await seriesValue(h, 'disk_operation_count', 'device_name="sda"', 'direction="read"'), 0);
    assert.deepEqual(await h.series('disk_avg_queue_len'), []);

    await writeFiles(host.root, { 'proc/diskstats': diskstats(2) });
    await h.advance(60_000);
    assert.equal(await seriesValue(h, 'disk_operation_count', 'device_name="sda"', 'direction="read"'), 1000);
    assert.equal(
      await seriesValue(h, 'disk_operation_count', 'device_name="sda"', 'direction="write"'),
      2000,
    );
    assert.equal(
      await seriesValue(h, 'disk_merged_operation_count', 'device_name="sda"', 'direction="write"'),
      20,
    );
    assert.equal(
      await seriesValue(h, 'disk_operation_bytes_count', 'device_name="sda"', 'direction="read"'),
      2000 * 512,
    );
    assert.equal(await seriesValue(h, 'disk_operation_time', 'device_name="sda1"', 'direction="write"'), 780);
    assert.equal(await seriesValue(h, 'disk_io_time', 'device_name="sda"'), 1200);
    assert.equal(await seriesValue(h, 'disk_weighted_io', 'device_name="sda"'), 1300);
    // 1300 ms of weighted I/O over 60 000 ms.
    assert.equal(await seriesValue(h, 'disk_avg_queue_len', 'device_name="sda"'), 1300 / 60_000);
  });

  it('reads every device in /proc/diskstats when neither include option is set, as NPD does', async () => {
    const host = await fakeHost(fullHost());
    const h = harness(statsConfig({ disk: enable('disk/io_time') }), host);
    await h.start();
    assert.deepEqual(await devicesOf(h, 'disk_io_time'), ['loop1', 'nvme0n1', 'sda', 'sda1']);
  });

  it('drops the series of a device that went away', async () => {
    const host = await fakeHost(fullHost());
    const h = harness(statsConfig({ disk: enable('disk/io_time') }), host);
    await h.start();
    await writeFiles(host.root, { 'proc/diskstats': diskstats().split('\n').slice(0, 2).join('\n') });
    await h.advance(60_000);
    assert.deepEqual(await devicesOf(h, 'disk_io_time'), ['sda', 'sda1']);
  });

  it('skips short lines and all-zero devices', () => {
    const stats = parseDiskstats(`${diskstats()}   8 2 sdz 1 2 3\n`);
    assert.deepEqual([...stats.keys()], ['sda', 'sda1', 'nvme0n1', 'loop1']);
  });
});

describe('disk collector: space', () => {
  it('reports each mounted block device once, with NPD labels and used/free states', async () => {
    const host = await fakeHost(fullHost());
    await mkdir(join(host.sys, 'dev', 'block'), { recursive: true });
    await symlink('../../block/sdb', join(host.sys, 'dev', 'block', '8:16'));
    const measured: string[] = [];
    const statfs = async (path: string) => {
      measured.push(path);
      return fakeStatfs(1000, 400, 300);
    };
    const h = harness(statsConfig({ disk: enable('disk/bytes_used', 'disk/percent_used') }), host, statfs);
    await h.start();
    // /var/lib/kubelet is sda1 again; proc, devtmpfs and tmpfs are not block devices.
    assert.deepEqual(measured, [join(host.root, '/'), join(host.root, '/mnt/my data')]);
    const sda1 = 'device_name="sda1",fs_type="ext4",mount_option="rw,relatime"';
    assert.deepEqual(await h.series('disk_bytes_used'), [
      `disk_bytes_used{${sda1},state="free"} ${300 * 4096}`,
      `disk_bytes_used{${sda1},state="used"} ${600 * 4096}`,
      `disk_bytes_used{device_name="sdb",fs_type="xfs",mount_option="rw,noatime",state="free"} ${300 * 4096}`,
      `disk_bytes_used{device_name="sdb",fs_type="xfs",mount_option="rw,noatime",state="used"} ${600 * 4096}`,
    ]);
    const used = await seriesValue(h, 'disk_percent_used', 'device_name="sda1"', 'state="used"');
    assert.ok(Math.abs(used - 200 / 3) < 1e-9);
    const free = await seriesValue(h, 'disk_percent_used', 'device_name="sda1"', 'state="free"');
    assert.ok(Math.abs(free - 100 / 3) < 1e-9);
  });

  it('counts a statfs failure and reports the other mounts', async () => {
    const host = await fakeHost(fullHost());
    const statfs = async (path: string) => {
      if (path.endsWith('my data')) throw new Error('EIO');
      return fakeStatfs(10, 5, 5);
    };
    const h = harness(statsConfig({ disk: enable('disk/bytes_used') }), host, statfs);
    await h.start();
    assert.equal((await h.series('disk_bytes_used')).length, 2);
    assert.equal(await seriesValue(h, 'npd_system_stats_errors_total', 'collector="disk"'), 1);
  });

  it('parses mountinfo like gopsutil: bind mounts flagged, octal escapes undone', () => {
    const [root, , kubelet, , data] = parseMountinfo(MOUNTINFO);
    assert.deepEqual(root?.opts, ['rw', 'relatime']);
    assert.deepEqual(kubelet?.opts, ['rw', 'relatime', 'bind']);
    assert.equal(data?.mountpoint, '/mnt/my data');
    assert.equal(data?.devno, '8:16');
    assert.match(FILESYSTEMS, /\text4/);
  });
});

describe('net collector', () => {
  const ids = [
    'net/rx_bytes',
    'net/rx_packets',
    'net/rx_errors',
    'net/rx_dropped',
    'net/rx_fifo',
    'net/rx_frame',
    'net/rx_compressed',
    'net/rx_multicast',
    'net/tx_bytes',
    'net/tx_packets',
    'net/tx_errors',
    'net/tx_dropped',
    'net/tx_fifo',
    'net/tx_collisions',
    'net/tx_carrier',
    'net/tx_compressed',
  ];

  it('counts every /proc/net/dev column per interface, skipping excluded interfaces', async () => {
    const host = await fakeHost({ 'proc/net/dev': netDev() });
    const config = statsConfig({ net: { ...enable(...ids), excludeInterfaceRegexp: '^(cali|tunl|veth)' } });
    const h = harness(config, host);
    await h.start();
    assert.deepEqual(await h.series('net_rx_bytes'), [
      'net_rx_bytes{interface_name="lo"} 0',
      'net_rx_bytes{interface_name="eth0"} 0',
    ]);
    await writeFiles(host.root, { 'proc/net/dev': netDev(3) });
    await h.advance(60_000);
    // eth0's column i is (1000 + i) × scale.
    assert.equal(await seriesValue(h, 'net_rx_bytes', 'eth0'), 2000);
    assert.equal(await seriesValue(h, 'net_rx_multicast', 'eth0'), 2 * 1007);
    assert.equal(await seriesValue(h, 'net_tx_bytes', 'eth0'), 2 * 1008);
    assert.equal(await seriesValue(h, 'net_tx_compressed', 'eth0'), 2 * 1015);
    assert.equal(await seriesValue(h, 'net_tx_carrier', '"lo"'), 2 * 114);
  });

  it('counts from zero again when an interface counter restarts', async () => {
    const host = await fakeHost({ 'proc/net/dev': netDev(3) });
    const h = harness(statsConfig({ net: enable('net/rx_bytes') }), host);
    await h.start();
    await writeFiles(host.root, { 'proc/net/dev': netDev(1) });
    await h.advance(60_000);
    assert.equal(await seriesValue(h, 'net_rx_bytes', 'eth0'), 1000);
  });
});

describe('os-feature collector', () => {
  it('reports NPD features from /proc/cmdline and /proc/modules against known-modules.json', async () => {
    const host = await fakeHost({ 'proc/cmdline': CMDLINE, 'proc/modules': MODULES });
    const config = statsConfig(
      {
        osFeature: {
          ...enable('system/os_feature'),
          KnownModulesConfigPath: 'guestosconfig/known-modules.json',
        },
      },
      join(FIXTURES, 'system-stats-monitor.json'),
    );
    const h = harness(config, host);
    await h.start();
    assert.deepEqual(await h.series('system_os_feature'), [
      'system_os_feature{os_feature="KTD"} 1',
      'system_os_feature{os_feature="UnifiedCgroupHierarchy"} 1',
      'system_os_feature{os_feature="KernelModuleIntegrity"} 1',
      'system_os_feature{os_feature="UnknownModules",value="mydriver,vendor_blob"} 1',
      'system_os_feature{os_feature="GPUSupport"} 1',
    ]);
    assert.equal(h.monitor.health().healthy, true);
  });

  it('treats every third-party module as unknown without the list, and counts the miss', async () => {
    const host = await fakeHost({ 'proc/cmdline': 'ro quiet\n', 'proc/modules': MODULES });
    const h = harness(
      statsConfig({ osFeature: enable('system/os_feature') }, join(host.root, 'x.json')),
      host,
    );
    await h.start();
    const lines = await h.series('system_os_feature');
    assert.ok(lines.includes('system_os_feature{os_feature="KTD"} 0'));
    assert.ok(lines.includes('system_os_feature{os_feature="KernelModuleIntegrity"} 0'));
    assert.ok(
      lines.includes(
        'system_os_feature{os_feature="UnknownModules",value="mydriver,vendor_blob,xt_MASQUERADE"} 1',
      ),
    );
    assert.equal(await seriesValue(h, 'npd_system_stats_errors_total', 'collector="os-feature"'), 1);
  });

  it('splits the command line as NPD does', () => {
    const args = parseCmdline(CMDLINE);
    assert.equal(args.get('root'), '/dev/sda1');
    assert.equal(args.get('dm'), '1 vroot none ro 1,0 4077568 verity');
    assert.equal(args.get('csm.enabled'), '1');
    assert.deepEqual(parseModules('ext4 1 0 - Live 0x0\nfoo 1 0 - Live 0x0 (OE)\n'), [
      { name: 'ext4', thirdParty: false },
      { name: 'foo', thirdParty: true },
    ]);
  });
});
