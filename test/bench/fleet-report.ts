/** Prints the fleet bench's windows: one table row per scenario, its details, and the extrapolation. */
import { deltaBy } from '../fleet/apiserver.ts';
import type { AuditRow } from '../fleet/audit-rows.ts';
import { quantile, fmt } from '../fleet/util.ts';
import { loadFigures, maxPerNode, retryAfterFigures } from '../fleet/window-stats.ts';
import { metricSum } from '../fleet/workers.ts';
import type { Window } from './fleet-window.ts';

/** Events the agents lost, by the agents' own counters: given up, dropped, spam-filtered. */
export function lostEvents(w: Window): string {
  const given = metricSum(w.metrics, 'npd_events_given_up_total');
  const dropped = metricSum(w.metrics, 'npd_events_dropped_total');
  return `${given + dropped} (${given}, ${dropped})`;
}

export function tableRow(w: Window, nodes: number): string {
  const l = w.load;
  const cpuPct = (100 * w.apiserverCpu) / w.seconds;
  const lease = w.lease.latencies;
  return `| ${w.label} | ${fmt(w.seconds, 0)} | ${fmt(l.requests / nodes, 2)} | ${fmt(l.writes / nodes, 2)} | ${l.peakQps} | ${fmt(l.meanQps)} | ${fmt(w.apiserverCpu)} (${fmt(cpuPct, 0)} %) | ${fmt(l.p50Ms)} / ${fmt(l.p99Ms)} | ${l.codes['429'] ?? 0} | ${fmt(quantile(lease, 0.5))} / ${fmt(quantile(lease, 0.99))} (${w.leaseServerP99}) | ${w.recoverySeconds === undefined ? '-' : fmt(w.recoverySeconds)} | ${lostEvents(w)} |`;
}

function nonzero(m: Record<string, number>, pattern: RegExp): string {
  return Object.entries(m)
    .filter(([k, v]) => pattern.test(k) && v !== 0)
    .map(([k, v]) => `${k} ${v}`)
    .join('; ');
}

function failedByKind(rows: readonly AuditRow[]): Record<string, number> {
  const failed: Record<string, number> = {};
  for (const r of rows) {
    if (r.code < 400) continue;
    const k = `${r.verb} ${r.resource} ${r.code}`;
    failed[k] = (failed[k] ?? 0) + 1;
  }
  return failed;
}

export function details(w: Window): void {
  console.log(`\n### ${w.label} (${w.load1} at its end)`);
  const first30 = w.rows.filter((r) => r.at < w.t0 + 30_000).length;
  console.log(
    `  requests in the first 30 s: ${first30}; by kind ${JSON.stringify(w.load.byKind)}; codes ${JSON.stringify(w.load.codes)}`,
  );
  // A fleet-wide change makes every agent write in the same second by design; a busy second after the
  // first 10 s is retries or heartbeats moving in step.
  const later = loadFigures(
    w.rows.filter((r) => r.at >= w.t0 + 10_000),
    w.seconds - 10,
  );
  console.log(
    `  after the first 10 s: busiest second ${later.peakQps} requests, mean ${fmt(later.meanQps)}/s`,
  );
  const failed = failedByKind(w.rows);
  if (Object.keys(failed).length > 0) console.log(`  failed requests by kind: ${JSON.stringify(failed)}`);
  const busiest = maxPerNode(w.rows, 10_000);
  console.log(`  busiest node: ${busiest.count} requests within 10 s (${busiest.node})`);
  const ra = retryAfterFigures(w.rows);
  if (ra.rejected > 0)
    console.log(
      `  429s: ${ra.rejected}; the same loop's next request came after p50 ${fmt(quantile(ra.gapsMs, 0.5) / 1000)} s, min ${fmt(Math.min(...ra.gapsMs) / 1000, 3)} s; ${ra.under1s} sooner than 1 s (APF's shortest Retry-After)`,
    );
  const rejected = deltaBy(w.before, w.after, 'apiserver_flowcontrol_rejected_requests_total', 'flow_schema');
  const rj = [...rejected].filter(([, v]) => v > 0);
  if (rj.length > 0)
    console.log(`  APF rejections by FlowSchema: ${rj.map(([k, v]) => `${k} ${v}`).join(', ')}`);
  console.log(
    `  neighbour: ${w.lease.count} renewals, codes ${JSON.stringify(w.lease.codes)}, FlowSchema ${w.lease.flowSchemas.join(', ')}`,
  );
  const counters = nonzero(w.metrics, /given_up|dropped|spam|queue|retries|sync_total|429/);
  if (counters) console.log(`  agents' counters: ${counters}`);
  for (const n of w.notes) console.log(`  ${n}`);
}
