/** Figures of one scenario window from the agents' audit rows: load, latency, per-node pacing, 429s. */
import type { AuditRow } from './audit-rows.ts';
import { quantile } from './util.ts';

export interface LoadFigures {
  readonly requests: number;
  readonly writes: number;
  readonly peakQps: number;
  readonly meanQps: number;
  /** Server-side latency (received to response complete), ms. */
  readonly p50Ms: number;
  readonly p99Ms: number;
  readonly codes: Record<string, number>;
  readonly byKind: Record<string, number>;
}

const READS = new Set(['get', 'list', 'watch']);

export function loadFigures(rows: readonly AuditRow[], seconds: number): LoadFigures {
  const perSecond = new Map<number, number>();
  const codes: Record<string, number> = {};
  const byKind: Record<string, number> = {};
  for (const r of rows) {
    const s = Math.floor(r.at / 1000);
    perSecond.set(s, (perSecond.get(s) ?? 0) + 1);
    codes[r.code] = (codes[r.code] ?? 0) + 1;
    const kind = `${r.verb} ${r.resource}`;
    byKind[kind] = (byKind[kind] ?? 0) + 1;
  }
  const lat = rows.map((r) => r.end - r.at);
  return {
    requests: rows.length,
    writes: rows.filter((r) => !READS.has(r.verb)).length,
    peakQps: Math.max(0, ...perSecond.values()),
    meanQps: rows.length / Math.max(seconds, 1e-9),
    p50Ms: quantile(lat, 0.5),
    p99Ms: quantile(lat, 0.99),
    codes,
    byKind,
  };
}

function groupBy(rows: readonly AuditRow[], key: (r: AuditRow) => string): Map<string, AuditRow[]> {
  const out = new Map<string, AuditRow[]>();
  for (const r of rows) {
    const k = key(r);
    const list = out.get(k);
    if (list) list.push(r);
    else out.set(k, [r]);
  }
  for (const list of out.values()) list.sort((a, b) => a.at - b.at);
  return out;
}

/** The most requests any one node made within any `spanMs` (a sliding window over its own requests). */
export function maxPerNode(rows: readonly AuditRow[], spanMs: number): { node: string; count: number } {
  let best = { node: '', count: 0 };
  for (const [node, list] of groupBy(rows, (r) => r.node)) {
    let lo = 0;
    for (let hi = 0; hi < list.length; hi++) {
      while ((list[hi] as AuditRow).at - (list[lo] as AuditRow).at >= spanMs) lo++;
      if (hi - lo + 1 > best.count) best = { node, count: hi - lo + 1 };
    }
  }
  return best;
}

export interface RetryAfterFigures {
  readonly rejected: number;
  /** Gaps (ms) from a 429's response to the same node's next request of the same kind. */
  readonly gapsMs: number[];
  /** Gaps shorter than the shortest Retry-After APF sends (1 s). */
  readonly under1s: number;
}

/**
 * Whether the agents waited after a 429: per node and request kind (status patches, event writes and
 * node reads are separate loops in the agent, each told its own Retry-After), the time from each
 * rejection to the next attempt of that loop.
 */
export function retryAfterFigures(rows: readonly AuditRow[]): RetryAfterFigures {
  const gapsMs: number[] = [];
  let rejected = 0;
  for (const list of groupBy(rows, (r) => `${r.node} ${r.verb} ${r.resource}`).values()) {
    for (let i = 0; i < list.length; i++) {
      const r = list[i] as AuditRow;
      if (r.code !== 429) continue;
      rejected++;
      const next = list[i + 1];
      if (next) gapsMs.push(next.at - r.end);
    }
  }
  return { rejected, gapsMs, under1s: gapsMs.filter((g) => g < 1000).length };
}

/** Seconds from `t0` until each node's first request answered 2xx, as [count, p50, max]. */
export function firstSuccess(rows: readonly AuditRow[], t0: number, nodes: number): string {
  const first = new Map<string, number>();
  for (const r of rows) {
    if (r.code < 200 || r.code >= 300) continue;
    first.set(r.node, Math.min(first.get(r.node) ?? Number.POSITIVE_INFINITY, (r.at - t0) / 1000));
  }
  const s = [...first.values()];
  return `${s.length}/${nodes} nodes answered 2xx; first success after p50 ${quantile(s, 0.5).toFixed(1)} s, max ${Math.max(0, ...s).toFixed(1)} s`;
}
