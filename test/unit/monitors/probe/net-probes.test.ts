import assert from 'node:assert/strict';
import { mkdir, rm, symlink } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { FakeClock } from '../../../../src/core/clock.ts';
import { env, fakeHost, probe, run, runOne, T0, writeFiles } from './helpers.ts';

const link = (operstate: string, carrier: string | undefined, changes: number) => ({
  operstate: `${operstate}\n`,
  ...(carrier === undefined ? {} : { carrier: `${carrier}\n` }),
  carrier_changes: `${changes}\n`,
});

async function netHost(links: Record<string, Record<string, string>>) {
  const files: Record<string, string> = {};
  for (const [name, attrs] of Object.entries(links))
    for (const [file, text] of Object.entries(attrs)) files[`sys/class/net/${name}/${file}`] = text;
  return fakeHost(files);
}

describe('interfaces probe', () => {
  it('is OK when every named interface is up, NonOK naming the one that is not', async () => {
    const host = await netHost({ eth0: link('up', '1', 2), eth1: link('down', undefined, 3) });
    const [up, flap] = await run(probe({ kind: 'interfaces', interfaces: ['eth0'] }, env(host)));
    assert.equal(up?.status, 'OK');
    assert.equal(up?.rule.condition, 'NetworkInterfaceDown');
    assert.equal(flap?.status, 'OK');
    assert.equal(flap?.rule.condition, 'NetworkInterfaceFlapping');
    const [down] = await run(probe({ kind: 'interfaces', interfaces: ['eth0', 'eth1', 'eth9'] }, env(host)));
    assert.equal(down?.status, 'NonOK');
    assert.equal(down?.rule.reason, 'InterfaceDown');
    assert.match(down?.message ?? '', /^eth1 is down; eth9 does not exist; check `ip link show`/);
  });

  it('counts operstate unknown as up only with carrier (lo, some virtual NICs)', async () => {
    const host = await netHost({ tun0: link('unknown', '1', 0), tun1: link('unknown', '0', 0) });
    const [a] = await run(probe({ kind: 'interfaces', interfaces: ['tun0'] }, env(host)));
    assert.equal(a?.status, 'OK');
    const [b] = await run(probe({ kind: 'interfaces', interfaces: ['tun1'] }, env(host)));
    assert.equal(b?.status, 'NonOK');
    assert.match(b?.message ?? '', /tun1 is unknown \(no carrier\)/);
  });

  it('reports flapping from carrier_changes within the window, and clears after it', async () => {
    const host = await netHost({ eth0: link('up', '1', 10) });
    const clock = new FakeClock(T0);
    const check = probe(
      { kind: 'interfaces', interfaces: ['eth0'], flapping: { changes: 4, window: '10m' } },
      env(host, clock),
    );
    const flapOf = async () => (await run(check))[1];
    assert.equal((await flapOf())?.status, 'OK', 'first sample is the baseline, whatever the total');
    clock.advance(60_000);
    await writeFiles(host.root, { 'sys/class/net/eth0/carrier_changes': '13\n' });
    assert.equal((await flapOf())?.status, 'OK', 'three changes are below four');
    clock.advance(60_000);
    await writeFiles(host.root, { 'sys/class/net/eth0/carrier_changes': '14\n' });
    const flap = await flapOf();
    assert.equal(flap?.status, 'NonOK');
    assert.equal(flap?.rule.reason, 'InterfaceFlapping');
    assert.match(flap?.message ?? '', /^eth0 changed carrier 4 times in 10m0s \(at least 4 is flapping\)/);
    clock.advance(8 * 60_000);
    assert.equal((await flapOf())?.status, 'NonOK', 'the sample at the window start is the baseline');
    clock.advance(60_000);
    assert.equal((await flapOf())?.status, 'OK', 'no change within the last 10m');
  });

  it('takes device-backed interfaces when none are named, and Unknown when there are none', async () => {
    const host = await netHost({ eth0: link('down', undefined, 1), veth1: link('down', undefined, 1) });
    await mkdir(join(host.root, 'devices/pci0'), { recursive: true });
    await symlink(join(host.root, 'devices/pci0'), join(host.sys, 'class/net/eth0/device'));
    const [r] = await run(probe({ kind: 'interfaces' }, env(host)));
    assert.equal(r?.status, 'NonOK');
    assert.match(r?.message ?? '', /^eth0 is down; /, 'veth1 has no device and is not checked');
    await rm(join(host.sys, 'class/net/eth0/device'));
    const [none] = await run(probe({ kind: 'interfaces' }, env(host)));
    assert.equal(none?.status, 'Unknown');
    assert.match(none?.message ?? '', /name the interfaces/);
  });
});

const ROUTE_HEADER = 'Iface\tDestination\tGateway \tFlags\tRefCnt\tUse\tMetric\tMask\t\tMTU\tWindow\tIRTT\n';
const ROUTE_DEFAULT = 'eth0\t00000000\t010200C0\t0003\t0\t0\t0\t00000000\t0\t0\t0\n';
const ROUTE_SUBNET = 'eth0\t000200C0\t00000000\t0001\t0\t0\t0\t00FFFFFF\t0\t0\t0\n';
const V6_NULL = `${'0'.repeat(32)} 00 ${'0'.repeat(32)} 00 ${'0'.repeat(32)} ffffffff 00000001 00000000 00200200       lo\n`;
const V6_DEFAULT = `${'0'.repeat(32)} 00 ${'0'.repeat(32)} 00 fe800000000000000000000000000001 00000400 00000002 00000000 00000003     eth0\n`;

describe('default-route probe', () => {
  it('finds the IPv4 default route and names its gateway', async () => {
    const host = await fakeHost({ 'proc/net/route': ROUTE_HEADER + ROUTE_SUBNET + ROUTE_DEFAULT });
    const r = await runOne(probe({ kind: 'default-route' }, env(host)));
    assert.equal(r.status, 'OK');
    assert.equal(r.message, 'default route: IPv4 via 192.0.2.1 dev eth0');
    assert.equal(r.rule.condition, 'NoDefaultRoute');
  });

  it('is NonOK without one, and ignores reject routes and the IPv6 null entry on lo', async () => {
    const reject = 'eth0\t00000000\t00000000\t0201\t0\t0\t0\t00000000\t0\t0\t0\n';
    const host = await fakeHost({
      'proc/net/route': ROUTE_HEADER + ROUTE_SUBNET + reject,
      'proc/net/ipv6_route': V6_NULL,
    });
    const r = await runOne(probe({ kind: 'default-route', ipv6: true }, env(host)));
    assert.equal(r.status, 'NonOK');
    assert.equal(r.rule.reason, 'DefaultRouteMissing');
    assert.match(r.message, /^no IPv4 or IPv6 default route: .*`ip route`/);
  });

  it('checks IPv6 alone, and reads a kernel without IPv6 as no IPv6 route', async () => {
    const host = await fakeHost({ 'proc/net/ipv6_route': V6_NULL + V6_DEFAULT });
    const r = await runOne(probe({ kind: 'default-route', ipv4: false, ipv6: true }, env(host)));
    assert.equal(r.status, 'OK');
    assert.equal(r.message, 'default route: IPv6 via fe80::1 dev eth0');
    const none = await fakeHost({ 'proc/net/route': ROUTE_HEADER });
    const n = await runOne(probe({ kind: 'default-route', ipv4: false, ipv6: true }, env(none)));
    assert.equal(n.status, 'NonOK');
  });
});

describe('sysctl probe', () => {
  it('defaults to net.ipv4.ip_forward=1', async () => {
    const on = await fakeHost({ 'proc/sys/net/ipv4/ip_forward': '1\n' });
    const ok = await runOne(probe({ kind: 'sysctl' }, env(on)));
    assert.equal(ok.status, 'OK');
    assert.equal(ok.message, 'net.ipv4.ip_forward=1');
    const off = await fakeHost({ 'proc/sys/net/ipv4/ip_forward': '0\n' });
    const bad = await runOne(probe({ kind: 'sysctl' }, env(off)));
    assert.equal(bad.status, 'NonOK');
    assert.equal(bad.rule.condition, 'NetworkSysctlMisconfigured');
    assert.match(bad.message, /^net\.ipv4\.ip_forward is 0, expected 1 \(sysctl -w net\.ipv4\.ip_forward=1/);
  });

  it('normalises whitespace, takes slash names, and names a missing sysctl', async () => {
    const host = await fakeHost({
      'proc/sys/net/ipv4/ip_local_port_range': '32768\t60999\n',
      'proc/sys/net/ipv4/conf/eth0.100/rp_filter': '2\n',
    });
    const values = {
      'net.ipv4.ip_local_port_range': '32768 60999',
      'net/ipv4/conf/eth0.100/rp_filter': 2,
      'net.bridge.bridge-nf-call-iptables': 1,
    };
    const r = await runOne(probe({ kind: 'sysctl', values }, env(host)));
    assert.equal(r.status, 'NonOK');
    assert.equal(
      r.message,
      'net.bridge.bridge-nf-call-iptables does not exist (is the kernel module that provides it, e.g. br_netfilter, loaded?)',
    );
  });
});

describe('nic-counters probe', () => {
  const stats = (rx: number, tx: number) => ({
    'sys/class/net/eth0/statistics/rx_dropped': `${rx}\n`,
    'sys/class/net/eth0/statistics/tx_dropped': `${tx}\n`,
  });

  it('fires when a counter rises by more than the limit within the window, then clears', async () => {
    const host = await fakeHost(stats(5000, 7));
    const clock = new FakeClock(T0);
    const check = probe(
      { kind: 'nic-counters', interfaces: ['eth0'], increase: 100, window: '5m' },
      env(host, clock),
    );
    assert.equal((await runOne(check)).status, 'OK', 'a large total alone is not a problem');
    clock.advance(60_000);
    await writeFiles(host.root, stats(5100, 7));
    assert.equal((await runOne(check)).status, 'OK', 'a rise of exactly the limit is not above it');
    clock.advance(60_000);
    await writeFiles(host.root, stats(5101, 9));
    const bad = await runOne(check);
    assert.equal(bad.status, 'NonOK');
    assert.equal(bad.rule.condition, 'NetworkInterfacePacketLoss');
    assert.match(bad.message, /^eth0 rx_dropped \+101 in 5m0s \(limit 100\); /);
    clock.advance(3 * 60_000);
    assert.equal((await runOne(check)).status, 'NonOK', 'the sample at the window start is the baseline');
    clock.advance(60_000);
    assert.equal((await runOne(check)).status, 'OK');
  });

  it('starts a new baseline when a counter goes backwards (driver reload)', async () => {
    const host = await fakeHost(stats(5000, 0));
    const clock = new FakeClock(T0);
    const check = probe({ kind: 'nic-counters', interfaces: ['eth0'], increase: 10 }, env(host, clock));
    await runOne(check);
    clock.advance(30_000);
    await writeFiles(host.root, stats(3, 0));
    assert.equal((await runOne(check)).status, 'OK');
  });

  it('names counters it cannot find and is Unknown when it finds none', async () => {
    const host = await fakeHost(stats(1, 1));
    const some = await runOne(
      probe(
        { kind: 'nic-counters', interfaces: ['eth0'], counters: ['rx_dropped', 'rx_missed_errors'] },
        env(host),
      ),
    );
    assert.equal(some.status, 'OK');
    assert.match(some.message, /not found: eth0 rx_missed_errors$/);
    const none = await runOne(probe({ kind: 'nic-counters', interfaces: ['eth5'] }, env(host)));
    assert.equal(none.status, 'Unknown');
  });
});
