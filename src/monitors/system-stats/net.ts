import { join } from 'node:path';
import RE2 from 're2';
import { readText } from '../../host/procfs/proc.ts';
import {
  counterSpec,
  type MetricSpec,
  num,
  type StatsCollector,
  type StatsEnv,
  sectionMetrics,
} from './common.ts';
import { type MetricIdOf, STATS_METRIC_IDS, type SystemStatsConfig } from './schema.ts';

type NetId = MetricIdOf<'net'>;

const NET_SPECS: Readonly<Record<NetId, MetricSpec>> = {
  'net/rx_bytes': counterSpec('Cumulative count of bytes received.', 'interface_name'),
  'net/rx_packets': counterSpec('Cumulative count of packets received.', 'interface_name'),
  'net/rx_errors': counterSpec('Cumulative count of receive errors encountered.', 'interface_name'),
  'net/rx_dropped': counterSpec('Cumulative count of packets dropped while receiving.', 'interface_name'),
  'net/rx_fifo': counterSpec('Cumulative count of FIFO buffer errors.', 'interface_name'),
  'net/rx_frame': counterSpec('Cumulative count of packet framing errors.', 'interface_name'),
  'net/rx_compressed': counterSpec(
    'Cumulative count of compressed packets received by the device driver.',
    'interface_name',
  ),
  'net/rx_multicast': counterSpec(
    'Cumulative count of multicast frames received by the device driver.',
    'interface_name',
  ),
  'net/tx_bytes': counterSpec('Cumulative count of bytes transmitted.', 'interface_name'),
  'net/tx_packets': counterSpec('Cumulative count of packets transmitted.', 'interface_name'),
  'net/tx_errors': counterSpec('Cumulative count of transmit errors encountered.', 'interface_name'),
  'net/tx_dropped': counterSpec('Cumulative count of packets dropped while transmitting.', 'interface_name'),
  'net/tx_fifo': counterSpec('Cumulative count of FIFO buffer errors.', 'interface_name'),
  'net/tx_collisions': counterSpec(
    'Cumulative count of collisions detected on the interface.',
    'interface_name',
  ),
  'net/tx_carrier': counterSpec(
    'Cumulative count of carrier losses detected by the device driver.',
    'interface_name',
  ),
  'net/tx_compressed': counterSpec(
    'Cumulative count of compressed packets transmitted by the device driver.',
    'interface_name',
  ),
};

/** /proc/net/dev: per interface, its 16 counters in the kernel's column order (that of STATS_METRIC_IDS.net). */
export function parseNetDev(text: string): ReadonlyMap<string, readonly number[]> {
  const out = new Map<string, number[]>();
  for (const line of text.split('\n')) {
    const colon = line.indexOf(':');
    // The two header lines use '|' and have no colon.
    if (colon < 0) continue;
    const name = line.slice(0, colon).trim();
    const fields = line
      .slice(colon + 1)
      .trim()
      .split(/\s+/);
    if (fields.length < STATS_METRIC_IDS.net.length) throw new Error(`/proc/net/dev: short line for ${name}`);
    out.set(
      name,
      fields.slice(0, STATS_METRIC_IDS.net.length).map((f) => num(f, name)),
    );
  }
  return out;
}

/**
 * NPD's net collector. It reads procPath/net/dev, which is the network namespace of the agent itself:
 * the host's only with hostNetwork, as in NPD's DaemonSet.
 */
export function createNetCollector(config: SystemStatsConfig, env: StatsEnv): StatsCollector | undefined {
  const m = sectionMetrics(env, config.net.metrics, NET_SPECS);
  if (!m) return undefined;
  const pattern = config.net.excludeInterfaceRegexp;
  // Go's MatchString: unanchored, RE2 syntax.
  const exclude = pattern === '' ? undefined : new RE2(pattern);
  return {
    name: 'net',
    async collect() {
      const devices = parseNetDev(await readText(join(env.proc, 'net', 'dev')));
      for (const [iface, values] of devices) {
        if (exclude?.test(iface)) continue;
        STATS_METRIC_IDS.net.forEach((id, i) => {
          m.counter(id)?.observe({ interface_name: iface }, values[i] ?? 0);
        });
      }
      m.sweepCounters();
    },
    dispose: () => m.dispose(),
  };
}
