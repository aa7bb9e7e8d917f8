import assert from 'node:assert/strict';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { monitorTypes } from '../../../../src/agent/registry.ts';
import { type LoadedConfig, loadConfigs } from '../../../../src/config/load.ts';
import { hostPaths } from '../../../../src/host/paths.ts';
import type { ProbeMonitorConfig } from '../../../../src/monitors/probe/schema.ts';
import { fakeHost } from './helpers.ts';
import { runShipped } from './run-shipped.ts';

const RULES = join(import.meta.dirname, '../../../../rules');

/** The condition types a NetworkingReady subsystem condition reads, in the file's order. */
const NETWORK_CONDITIONS = [
  'NetworkInterfaceFlapping',
  'NetworkInterfaceDown',
  'NoDefaultRoute',
  'NetworkSysctlMisconfigured',
  'NetworkInterfacePacketLoss',
  'APIServerUnreachable',
];

describe('rules/probes-network.yaml', () => {
  const load = () =>
    loadConfigs(
      [{ file: join(RULES, 'probes-network.yaml'), kind: 'probe-monitor' }],
      monitorTypes().map((t) => t.configKind),
    )[0] as LoadedConfig<ProbeMonitorConfig>;

  it('declares the networking conditions; dns is present but disabled until a name is set', () => {
    const c = load().config;
    assert.equal(c.source, 'network-probe');
    assert.deepEqual(
      c.probes.map((p) => p.kind),
      ['interfaces', 'default-route', 'sysctl', 'nic-counters', 'apiserver'],
    );
    assert.deepEqual(
      c.conditions.map((x) => x.type),
      NETWORK_CONDITIONS,
    );
  });

  it('reports a fake host without a default route and with ip_forward off', async () => {
    const host = await fakeHost({
      'sys/class/net/eth0/operstate': 'up\n',
      'sys/class/net/eth0/carrier': '1\n',
      'sys/class/net/eth0/carrier_changes': '2\n',
      'sys/class/net/eth0/device/uevent': 'DRIVER=ena\n',
      'sys/class/net/eth0/statistics/rx_dropped': '0\n',
      'sys/class/net/eth0/statistics/tx_dropped': '0\n',
      'proc/net/route': 'Iface\tDestination\tGateway\tFlags\tRefCnt\tUse\tMetric\tMask\tMTU\tWindow\tIRTT\n',
      'proc/sys/net/ipv4/ip_forward': '0\n',
    });
    const status = await runShipped('probes-network.yaml', host);
    const byType = Object.fromEntries(status.conditions.map((c) => [c.type, [c.status, c.reason]]));
    assert.deepEqual(byType.NetworkInterfaceDown, ['False', 'InterfacesUp']);
    assert.deepEqual(byType.NetworkInterfaceFlapping, ['False', 'NoInterfaceFlapping']);
    assert.deepEqual(byType.NoDefaultRoute, ['True', 'DefaultRouteMissing']);
    assert.deepEqual(byType.NetworkSysctlMisconfigured, ['True', 'SysctlMismatch']);
    assert.deepEqual(byType.NetworkInterfacePacketLoss, ['False', 'NICCountersSteady']);
  });

  it('gives a verdict on this machine for every probe that needs no cluster', async () => {
    const status = await runShipped('probes-network.yaml', hostPaths('/'));
    const unknown = status.conditions.filter(
      (c) => c.status === 'Unknown' && c.type !== 'APIServerUnreachable',
    );
    assert.deepEqual(unknown, []);
  });
});
