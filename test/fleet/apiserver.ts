/**
 * What the API server says about itself: its /metrics (the server-side latency histogram of the Lease
 * renewals, APF's rejections per priority level) and its CPU time from /proc. A restart resets its
 * counters, so a window's figures are taken from snapshots of the same process.
 */
import type { ControlPlane } from '../e2e/harness/controlplane.ts';
import { cpuSeconds } from '../bench/proc.ts';

export type Series = Map<string, number>;

export async function scrape(cp: ControlPlane): Promise<Series> {
  const r = await cp.request('GET', '/metrics', { timeoutMs: 60_000 });
  const out: Series = new Map();
  for (const line of r.text.split('\n')) {
    if (line.startsWith('#') || !line) continue;
    const cut = line.lastIndexOf(' ');
    out.set(line.slice(0, cut), Number(line.slice(cut + 1)));
  }
  return out;
}

function labelsOf(key: string): Record<string, string> {
  const out: Record<string, string> = {};
  for (const m of key.matchAll(/(\w+)="([^"]*)"/g)) out[m[1] as string] = m[2] as string;
  return out;
}

/** Sums `name`'s growth between snapshots per value of `by`, over series matching `where`. */
export function deltaBy(
  before: Series,
  after: Series,
  name: string,
  by: string,
  where: Record<string, string> = {},
): Map<string, number> {
  const out = new Map<string, number>();
  for (const [key, v] of after) {
    if (!key.startsWith(`${name}{`)) continue;
    const labels = labelsOf(key);
    if (!Object.entries(where).every(([k, x]) => labels[k] === x)) continue;
    const d = v - (before.get(key) ?? 0);
    const g = labels[by] ?? '';
    out.set(g, (out.get(g) ?? 0) + d);
  }
  return out;
}

/**
 * A quantile of apiserver_request_duration_seconds for `where` over the window, as the upper bound of
 * the bucket it falls in (the SLO's own measure; coarse: buckets are 0.005 ... 60 s).
 */
export function histogramQuantile(
  before: Series,
  after: Series,
  where: Record<string, string>,
  q: number,
): { seconds: number; count: number } {
  const byLe = deltaBy(before, after, 'apiserver_request_duration_seconds_bucket', 'le', where);
  const les = [...byLe.entries()]
    .map(([le, n]) => [le === '+Inf' ? Number.POSITIVE_INFINITY : Number(le), n] as const)
    .sort((a, b) => a[0] - b[0]);
  const total = les.at(-1)?.[1] ?? 0;
  const hit = les.find(([, n]) => n >= q * total);
  return { seconds: total > 0 ? (hit?.[0] ?? Number.NaN) : Number.NaN, count: total };
}

export function apiserverCpu(cp: ControlPlane): number {
  const pid = cp.pids().apiserver;
  try {
    return pid ? cpuSeconds(pid) : Number.NaN;
  } catch {
    return Number.NaN;
  }
}
