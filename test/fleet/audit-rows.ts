/**
 * The agents' requests as the API server's audit log records them, read from a byte offset on (the
 * log grows to hundreds of MB over a fleet run, so it is never read from its start), one row per request
 * (stage ResponseComplete), attributed to its node by the node name the bound token carries.
 */
import { closeSync, fstatSync, openSync, readSync } from 'node:fs';
import { FLEET_SA_USER, NODE_NAME_EXTRA } from './identities.ts';

export interface AuditRow {
  readonly node: string;
  readonly verb: string;
  /** e.g. "nodes/status", "events", "nodes". */
  readonly resource: string;
  readonly code: number;
  /** requestReceivedTimestamp, epoch ms. */
  readonly at: number;
  /** stageTimestamp (ResponseComplete), epoch ms. */
  readonly end: number;
}

interface RawEvent {
  stage?: string;
  verb?: string;
  user?: { username?: string; extra?: Record<string, string[]> };
  objectRef?: { resource?: string; subresource?: string };
  responseStatus?: { code?: number };
  requestReceivedTimestamp?: string;
  stageTimestamp?: string;
}

/** Microsecond RFC 3339 to epoch ms with the fraction kept (Date.parse keeps only milliseconds). */
function epochMs(ts: string | undefined): number {
  if (!ts) return Number.NaN;
  const m = /\.(\d+)Z$/.exec(ts);
  const frac = m ? Number(`0.${m[1]}`) * 1000 : 0;
  return Date.parse(ts.replace(/\.\d+Z$/, 'Z')) + frac;
}

function row(line: string): AuditRow | undefined {
  if (!line.includes(FLEET_SA_USER) || !line.includes('"ResponseComplete"')) return undefined;
  let e: RawEvent;
  try {
    e = JSON.parse(line) as RawEvent;
  } catch {
    return undefined;
  }
  if (e.stage !== 'ResponseComplete' || e.user?.username !== FLEET_SA_USER) return undefined;
  const o = e.objectRef ?? {};
  return {
    node: e.user.extra?.[NODE_NAME_EXTRA]?.[0] ?? '',
    verb: e.verb ?? '',
    resource: `${o.resource ?? '?'}${o.subresource ? `/${o.subresource}` : ''}`,
    code: e.responseStatus?.code ?? 0,
    at: epochMs(e.requestReceivedTimestamp),
    end: epochMs(e.stageTimestamp),
  };
}

export function auditSize(path: string): number {
  const fd = openSync(path, 'r');
  try {
    return fstatSync(fd).size;
  } finally {
    closeSync(fd);
  }
}

/** The agents' rows of complete lines between byte offsets `from` and `to` (default: the end). */
export function agentRows(path: string, from: number, to?: number): AuditRow[] {
  const fd = openSync(path, 'r');
  try {
    const end = to ?? fstatSync(fd).size;
    const out: AuditRow[] = [];
    const chunk = 64 * 1024 * 1024;
    let rest = '';
    for (let pos = from; pos < end; pos += chunk) {
      const buf = Buffer.alloc(Math.min(chunk, end - pos));
      readSync(fd, buf, 0, buf.length, pos);
      const lines = (rest + buf.toString('utf8')).split('\n');
      rest = lines.pop() ?? '';
      for (const l of lines) {
        const r = row(l);
        if (r) out.push(r);
      }
    }
    return out;
  } finally {
    closeSync(fd);
  }
}
