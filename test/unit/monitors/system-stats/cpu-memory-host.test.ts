import assert from 'node:assert/strict';
import { rm } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { parseProcStat } from '../../../../src/monitors/system-stats/cpu.ts';
import { osVersion, parseOsRelease } from '../../../../src/monitors/system-stats/host.ts';
import { enable, fakeHost, harness, seriesValue, statsConfig, writeFiles } from './helpers.ts';
import { LOADAVG, MEMINFO, OS_RELEASE_COS, OS_RELEASE_UBUNTU, procStat } from './proc-trees.ts';

const CPU_IDS = [
  'cpu/runnable_task_count',
  'cpu/usage_time',
  'cpu/load_1m',
  'cpu/load_5m',
  'cpu/load_15m',
  'system/processes_total',
  'system/procs_running',
  'system/procs_blocked',
  'system/interrupts_total',
  'system/cpu_stat',
];

describe('cpu collector', () => {
  it('reports load averages and /proc/stat gauges, with no labels where NPD has none', async () => {
    const host = await fakeHost({ 'proc/loadavg': LOADAVG, 'proc/stat': procStat() });
    const h = harness(statsConfig({ cpu: enable(...CPU_IDS) }), host);
    await h.start();
    assert.deepEqual(await h.series('cpu_runnable_task_count'), ['cpu_runnable_task_count 0.52']);
    assert.deepEqual(await h.series('cpu_load_1m'), ['cpu_load_1m 0.52']);
    assert.deepEqual(await h.series('cpu_load_5m'), ['cpu_load_5m 0.58']);
    assert.deepEqual(await h.series('cpu_load_15m'), ['cpu_load_15m 0.61']);
    assert.deepEqual(await h.series('system_procs_running'), ['system_procs_running 3']);
    assert.deepEqual(await h.series('system_procs_blocked'), ['system_procs_blocked 1']);
  });

  it('counts usage since the agent started, in seconds, as per-interval deltas', async () => {
    const host = await fakeHost({ 'proc/loadavg': LOADAVG, 'proc/stat': procStat() });
    const h = harness(statsConfig({ cpu: enable(...CPU_IDS) }), host);
    await h.start();
    const states = (await h.series('cpu_usage_time')).map((l) => /state="([^"]+)"/.exec(l)?.[1]);
    assert.deepEqual(states, [
      'user',
      'nice',
      'system',
      'idle',
      'iowait',
      'irq',
      'softirq',
      'steal',
      'guest',
      'guest_nice',
    ]);
    assert.equal(await seriesValue(h, 'cpu_usage_time', 'state="user"'), 0);
    assert.equal(await seriesValue(h, 'system_processes_total'), 0);

    await writeFiles(host.root, { 'proc/stat': procStat(3) });
    await h.advance(60_000);
    // user went from 1000 to 3000 ticks of 1/100 s.
    assert.equal(await seriesValue(h, 'cpu_usage_time', 'state="user"'), 20);
    assert.equal(await seriesValue(h, 'cpu_usage_time', 'state="idle"'), 1000);
    assert.equal(await seriesValue(h, 'system_processes_total'), 8484);
    assert.equal(await seriesValue(h, 'system_interrupts_total'), 246912);
    assert.equal(await seriesValue(h, 'system_cpu_stat', 'cpu="cpu1"', 'stage="user"'), 8);
    const softIrq = await seriesValue(h, 'system_cpu_stat', 'cpu="cpu0"', 'stage="softIRQ"');
    assert.ok(Math.abs(softIrq - 0.1) < 1e-9, String(softIrq));
    assert.equal((await h.series('system_cpu_stat')).length, 20);
  });

  it('parses kernels with fewer cpu columns and rejects a file without a cpu line', () => {
    const old = parseProcStat(
      'cpu 100 0 50 1000 0 0 0\nintr 5\nprocesses 9\nprocs_running 1\nprocs_blocked 0\n',
    );
    assert.deepEqual(old.total, [1, 0, 0.5, 10, 0, 0, 0, 0, 0, 0]);
    assert.throws(() => parseProcStat('intr 5\n'), /no cpu line/);
  });

  it('counts a missing file as an error of the cpu collector and keeps going', async () => {
    const host = await fakeHost({ 'proc/stat': procStat() });
    const h = harness(statsConfig({ cpu: enable(...CPU_IDS) }), host);
    await h.start();
    assert.deepEqual(await h.series('npd_system_stats_errors_total'), [
      'npd_system_stats_errors_total{collector="cpu"} 1',
    ]);
    assert.deepEqual(await h.series('cpu_load_1m'), []);
    assert.equal(await seriesValue(h, 'system_procs_running'), 3);
    // Something was read, so the monitor stays healthy; the failure shows in the detail.
    const health = h.monitor.health();
    assert.equal(health.up, true);
    assert.equal(health.healthy, true);
    assert.match(health.detail ?? '', /^cpu: .*loadavg/);

    await writeFiles(host.root, { 'proc/loadavg': LOADAVG });
    await h.advance(60_000);
    assert.equal(h.monitor.health().detail, undefined);
    assert.equal(await seriesValue(h, 'cpu_load_1m'), 0.52);
  });

  it('is unhealthy only when nothing at all could be read', async () => {
    const host = await fakeHost({
      'proc/uptime': '5 1\n',
      'proc/sys/kernel/osrelease': '6.1\n',
      'etc/os-release': 'ID=x\n',
    });
    const h = harness(statsConfig({ cpu: enable(...CPU_IDS) }), host);
    await h.start();
    // Each missing file is counted once: loadavg as a part, stat as the collector's failure.
    assert.equal(await seriesValue(h, 'npd_system_stats_errors_total', 'collector="cpu"'), 2);
    assert.equal(h.monitor.health().healthy, false);
    const both = harness(statsConfig({ cpu: enable(...CPU_IDS), host: enable('host/uptime') }), host);
    await both.start();
    assert.equal(both.monitor.health().healthy, true);
    assert.match(both.monitor.health().detail ?? '', /^cpu: .*stat/);
  });
});

describe('memory collector', () => {
  it('reports every NPD memory metric in bytes, with NPD states', async () => {
    const host = await fakeHost({ 'proc/meminfo': MEMINFO });
    const ids = [
      'memory/bytes_used',
      'memory/percent_used',
      'memory/anonymous_used',
      'memory/page_cache_used',
      'memory/unevictable_used',
      'memory/dirty_used',
    ];
    const h = harness(statsConfig({ memory: enable(...ids) }), host);
    await h.start();
    const KiB = 1024;
    assert.deepEqual(await h.series('memory_bytes_used'), [
      `memory_bytes_used{state="free"} ${4000000 * KiB}`,
      `memory_bytes_used{state="used"} ${8000000 * KiB}`,
      `memory_bytes_used{state="buffered"} ${500000 * KiB}`,
      `memory_bytes_used{state="cached"} ${3000000 * KiB}`,
      `memory_bytes_used{state="slab"} ${500000 * KiB}`,
    ]);
    assert.deepEqual(await h.series('memory_percent_used'), ['memory_percent_used{state="used"} 50']);
    assert.equal(await seriesValue(h, 'memory_anonymous_used', 'state="active"'), 4000000 * KiB);
    assert.equal(await seriesValue(h, 'memory_page_cache_used', 'state="inactive"'), 2900000 * KiB);
    assert.deepEqual(await h.series('memory_unevictable_used'), [`memory_unevictable_used ${12345 * KiB}`]);
    assert.equal(await seriesValue(h, 'memory_dirty_used', 'state="writeback"'), 8 * KiB);
  });

  it('counts a meminfo without the fields it needs as a memory error', async () => {
    const host = await fakeHost({ 'proc/meminfo': 'MemTotal: 100 kB\n' });
    const h = harness(statsConfig({ memory: enable('memory/bytes_used') }), host);
    await h.start();
    assert.equal(await seriesValue(h, 'npd_system_stats_errors_total', 'collector="memory"'), 1);
    assert.match(h.monitor.health().detail ?? '', /memory: \/proc\/meminfo: no MemFree/);
  });
});

describe('host collector', () => {
  it('reports uptime in whole seconds labelled with kernel and OS versions', async () => {
    const host = await fakeHost({
      'proc/uptime': '12345.67 54321.00\n',
      'proc/sys/kernel/osrelease': '6.1.0-17-amd64\n',
      'etc/os-release': OS_RELEASE_UBUNTU,
    });
    const h = harness(statsConfig({ host: enable('host/uptime') }), host);
    await h.start();
    assert.deepEqual(await h.series('host_uptime'), [
      'host_uptime{kernel_version="6.1.0-17-amd64",os_version="ubuntu 22.04.4 LTS (Jammy Jellyfish)"} 12345',
    ]);
    await writeFiles(host.root, { 'proc/uptime': '12405.2 1\n' });
    await h.advance(60_000);
    assert.equal((await h.series('host_uptime'))[0]?.endsWith(' 12405'), true);
  });

  it('formats the OS version as NPD does', () => {
    assert.equal(osVersion(parseOsRelease(OS_RELEASE_COS)), 'cos 73-11647.217.0');
    assert.equal(osVersion(parseOsRelease('ID=flatcar\nVERSION=4372.0.1\n')), 'flatcar 4372.0.1');
    assert.equal(
      osVersion(parseOsRelease('ID="rocky"\nVERSION="8.5 (Green Obsidian)"\n')),
      'rocky 8.5 (Green Obsidian)',
    );
  });

  it('still reports uptime without os-release, and counts the miss', async () => {
    const host = await fakeHost({ 'proc/uptime': '99.5 1\n', 'proc/sys/kernel/osrelease': '5.15.0\n' });
    const h = harness(statsConfig({ host: enable('host/uptime') }), host);
    await h.start();
    assert.deepEqual(await h.series('host_uptime'), [
      'host_uptime{kernel_version="5.15.0",os_version=""} 99',
    ]);
    assert.equal(await seriesValue(h, 'npd_system_stats_errors_total', 'collector="host"'), 1);
    await rm(join(host.proc, 'uptime'));
    await h.advance(60_000);
    assert.equal(await seriesValue(h, 'npd_system_stats_errors_total', 'collector="host"'), 3);
  });
});
