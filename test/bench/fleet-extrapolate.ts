/**
 * The extrapolation to 5,000 and 15,000 nodes. Method: every agent talks about its own node only (no
 * agent reads another's Node or events), so each scenario's requests per node do not depend on the
 * fleet's size and totals scale linearly with it. Peaks scale the same way as long as the agents spread
 * their requests over windows that do not grow with the fleet (the rollout's 60 s, the agents' own
 * jitter); measured here on 2 shared cores, so latencies and CPU do not extrapolate, only counts.
 */
import { fmt } from '../fleet/util.ts';
import type { Window } from './fleet-window.ts';

const TARGETS = [5000, 15_000];
const DEFAULT_HEARTBEAT_S = 300;
/** KEP-589: a Node object is ~15-20 KB, ~30 KB with server-side-apply managedFields. */
const NODE_BYTES = 30_000;

function scaled(perNode: number): string {
  return TARGETS.map((n) => `${n.toLocaleString('en')}: ${fmt(perNode * n)}`).join(', ');
}

export function extrapolate(windows: readonly Window[], nodes: number, heartbeatSeconds: number): void {
  console.log('\n### Extrapolation (linear in nodes; method in test/bench/fleet-extrapolate.ts)');
  for (const w of windows) {
    const mean = w.load.meanQps / nodes;
    const peak = w.load.peakQps / nodes;
    console.log(`  ${w.label}: mean QPS ${scaled(mean)}; peak QPS ${scaled(peak)}`);
  }
  const steady = windows.find((w) => w.label.startsWith('2 '));
  if (!steady) return;
  const patches = steady.rows.filter((r) => r.resource === 'nodes/status').length;
  const perNodeMin = (patches / nodes / (steady.seconds / 60)) * (heartbeatSeconds / DEFAULT_HEARTBEAT_S);
  console.log(
    `  steady state scaled to the default ${DEFAULT_HEARTBEAT_S} s heartbeat: ${fmt(perNodeMin, 3)} status PATCH per node per minute (measured at ${heartbeatSeconds} s)`,
  );
  for (const n of TARGETS) {
    const qps = (perNodeMin * n) / 60;
    const kubelet = n / DEFAULT_HEARTBEAT_S;
    console.log(
      `  ${n.toLocaleString('en')} nodes: ${fmt(qps)} PATCH/s, ~${fmt((qps * NODE_BYTES * 60) / 1e6, 0)} MB/min into etcd at ${NODE_BYTES / 1000} KB per Node write; the kubelet's own status report (every 5 min, KEP-589) is ${fmt(kubelet)} PATCH/s, so the agent adds ${fmt((100 * qps) / kubelet, 0)} % to the kubelet's status budget`,
    );
  }
}
