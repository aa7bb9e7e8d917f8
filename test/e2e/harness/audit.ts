/**
 * The kube-apiserver audit log: the policy the harness starts it with, and reading, counting and
 * waiting for entries, so tests can assert exactly which API calls the agent made.
 */
import * as fs from 'node:fs';
import { AGENT_USER } from './kubeconfig.ts';
import { sleep } from './processes.ts';
import type { AuditEvent, AuditFilter, AuditMark } from './types.ts';

/** The current end of an audit log (0 when it does not exist yet). */
export function auditMark(auditLogPath: string): AuditMark {
  try {
    return { offset: fs.statSync(auditLogPath).size };
  } catch {
    return { offset: 0 };
  }
}

function matches(ev: AuditEvent, f: AuditFilter): boolean {
  if (ev.stage !== (f.stage ?? 'ResponseComplete')) return false;
  if (f.verb !== undefined) {
    const verbs = Array.isArray(f.verb) ? f.verb : [f.verb];
    if (!verbs.includes(ev.verb)) return false;
  }
  const ref = ev.objectRef ?? {};
  if (f.resource !== undefined && ref.resource !== f.resource) return false;
  if (f.subresource === null && ref.subresource) return false;
  if (typeof f.subresource === 'string' && ref.subresource !== f.subresource) return false;
  if (f.apiGroup !== undefined && (ref.apiGroup ?? '') !== f.apiGroup) return false;
  if (f.name !== undefined && ref.name !== f.name) return false;
  if (f.namespace !== undefined && ref.namespace !== f.namespace) return false;
  if (f.user !== undefined && ev.user?.username !== f.user) return false;
  if (f.code !== undefined) {
    const code = ev.responseStatus?.code ?? 0;
    if (typeof f.code === 'number' ? code !== f.code : !f.code(code)) return false;
  }
  return true;
}

/** Complete JSON lines of the audit log written after `since`, filtered. */
export function readAuditEvents(
  auditLogPath: string,
  filter: AuditFilter = {},
  since?: AuditMark,
): AuditEvent[] {
  let buf: Buffer;
  try {
    buf = fs.readFileSync(auditLogPath);
  } catch {
    return [];
  }
  const start = Math.min(since?.offset ?? 0, buf.length);
  const end = buf.lastIndexOf(0x0a) + 1; // ignore a line still being written
  if (end <= start) return [];
  const out: AuditEvent[] = [];
  for (const line of buf.subarray(start, end).toString('utf8').split('\n')) {
    if (!line.trim()) continue;
    let ev: AuditEvent;
    try {
      ev = JSON.parse(line) as AuditEvent;
    } catch {
      continue;
    }
    if (matches(ev, filter)) out.push(ev);
  }
  return out;
}

/** Counts audit-log entries (one per request: stage ResponseComplete by default) after `since`. */
export function countAuditEvents(auditLogPath: string, filter: AuditFilter = {}, since?: AuditMark): number {
  return readAuditEvents(auditLogPath, filter, since).length;
}

/** Polls until at least `count` entries match or `timeoutMs` passes; returns the last count. */
export async function waitForAuditEvents(
  auditLogPath: string,
  filter: AuditFilter,
  since: AuditMark | undefined,
  count: number,
  timeoutMs = 5000,
): Promise<number> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const n = countAuditEvents(auditLogPath, filter, since);
    if (n >= count || Date.now() >= deadline) return n;
    await sleep(25);
  }
}

/**
 * Audit policy: nothing for the apiserver's own loopback client; Metadata for Events (core and
 * events.k8s.io), Nodes (incl. nodes/status) and everything the agent user does; nothing else.
 * RequestReceived is omitted, so there is one entry per request (two for watches: ResponseStarted too).
 */
export function auditPolicyYaml(agentUser = AGENT_USER): string {
  return JSON.stringify(
    {
      apiVersion: 'audit.k8s.io/v1',
      kind: 'Policy',
      omitStages: ['RequestReceived'],
      rules: [
        // The apiserver's own informers (list/watch of nodes) are noise for the tests.
        { level: 'None', users: ['system:apiserver'] },
        {
          level: 'Metadata',
          resources: [
            { group: '', resources: ['events', 'nodes', 'nodes/status'] },
            { group: 'events.k8s.io', resources: ['events'] },
          ],
        },
        { level: 'Metadata', users: [agentUser] },
        { level: 'None' },
      ],
    },
    null,
    2,
  );
}
