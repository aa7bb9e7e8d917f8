/**
 * The fault suite's way between an agent and the real kube-apiserver: a kubeconfig redirected to a local
 * port, and an HTTPS fault proxy that answers chosen requests with errors, late, or not at all.
 */
import { readFileSync, writeFileSync } from 'node:fs';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { createServer, request as httpsRequest, type Server } from 'node:https';
import { join } from 'node:path';
import { parse as parseYaml } from 'yaml';
import type { ControlPlane } from '../e2e/harness/controlplane.ts';

/**
 * A copy of a kubeconfig whose clusters point at another local port (a gate or the fault proxy). The
 * harness writes kubeconfigs as JSON (`"server": "..."`), which the text replacement in
 * test/e2e/support.ts kubeconfigVia does not match, so this one edits the parsed document instead.
 */
export function kubeconfigThrough(kubeconfig: string, port: number, dir: string, name = 'through'): string {
  const doc = parseYaml(readFileSync(kubeconfig, 'utf8')) as {
    clusters?: { cluster?: { server?: string } }[];
  };
  let changed = 0;
  for (const c of doc.clusters ?? []) {
    if (!c.cluster?.server) continue;
    const url = new URL(c.cluster.server);
    url.port = String(port);
    c.cluster.server = url.origin;
    changed++;
  }
  if (changed === 0) throw new Error(`${kubeconfig}: no cluster server to redirect`);
  const file = join(dir, `kubeconfig-${name}-${port}.json`);
  writeFileSync(file, JSON.stringify(doc, null, 2), { mode: 0o600 });
  return file;
}

export type Fault =
  | { readonly kind: 'status'; readonly status: number; readonly retryAfter?: string }
  /**
   * Answers late: waits, then forwards, like an overloaded apiserver that still does the work even
   * when the client has given up, unless `onlyIfConnected` (then a request whose client left is dropped).
   */
  | { readonly kind: 'delay'; readonly ms: number; readonly onlyIfConnected?: boolean }
  /** Never answers: waits, then drops the connection without forwarding. */
  | { readonly kind: 'hang'; readonly ms: number };

export interface FaultRule {
  readonly method: string;
  /** Matched against the request path (without the query). */
  readonly path: RegExp;
  /** How many matching requests get the fault; later ones pass through. */
  times: number;
  readonly fault: Fault;
}

export interface ProxyRecord {
  readonly method: string;
  readonly path: string;
  readonly at: number;
  fault?: Fault['kind'];
  /** The apiserver's answer (0: transport failure), or the injected status; absent when not answered. */
  status?: number;
  /** For events: metadata.name of a POST body, or the name in a PATCH path. */
  readonly eventName?: string;
  /** For event POSTs: the reason in the body. */
  readonly reason?: string;
}

export interface FaultProxy {
  readonly port: number;
  readonly log: ProxyRecord[];
  /** Arms a rule; rules are tried in the order added. */
  inject(rule: FaultRule): void;
  /** How many requests a rule has faulted so far. */
  injected(kind?: Fault['kind']): number;
  close(): Promise<void>;
}

const STATUS_REASON: Record<number, string> = {
  429: 'TooManyRequests',
  500: 'InternalError',
  503: 'ServiceUnavailable',
};

function statusBody(code: number): string {
  return JSON.stringify({
    kind: 'Status',
    apiVersion: 'v1',
    status: 'Failure',
    message: `injected by the fault proxy (${code})`,
    reason: STATUS_REASON[code] ?? 'Unknown',
    code,
  });
}

function readBody(req: IncomingMessage): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => resolve(Buffer.concat(chunks)));
    req.on('error', reject);
  });
}

function describe(req: IncomingMessage, body: Buffer): Omit<ProxyRecord, 'status' | 'fault'> {
  const path = (req.url ?? '').split('?', 1)[0] ?? '';
  const method = req.method ?? '';
  const at = Date.now();
  const patched = /\/events\/([^/]+)$/.exec(path);
  if (method === 'PATCH' && patched)
    return { method, path, at, eventName: decodeURIComponent(patched[1] ?? '') };
  if (method !== 'POST' || !path.endsWith('/events')) return { method, path, at };
  try {
    const ev = JSON.parse(body.toString('utf8')) as { metadata?: { name?: string }; reason?: string };
    return { method, path, at, eventName: ev.metadata?.name, reason: ev.reason };
  } catch {
    return { method, path, at };
  }
}

/** Sends the request on to the apiserver as it came (the agent's own bearer token included). */
function forward(
  upstreamPort: number,
  req: IncomingMessage,
  body: Buffer,
  res: ServerResponse,
): Promise<number> {
  return new Promise((resolve) => {
    const up = httpsRequest(
      {
        host: '127.0.0.1',
        port: upstreamPort,
        method: req.method,
        path: req.url,
        headers: { ...req.headers, host: `127.0.0.1:${upstreamPort}` },
        rejectUnauthorized: false,
      },
      (upRes) => {
        if (!res.destroyed) res.writeHead(upRes.statusCode ?? 502, upRes.headers);
        upRes.pipe(res);
        upRes.on('end', () => resolve(upRes.statusCode ?? 0));
      },
    );
    up.on('error', () => {
      res.destroy();
      resolve(0);
    });
    up.end(body);
  });
}

interface ProxyState {
  readonly upstreamPort: number;
  readonly rules: FaultRule[];
  readonly log: ProxyRecord[];
  readonly counts: Map<string, number>;
}

/** Applies a fault; true when the request was answered (or dropped) here and must not be forwarded. */
async function applyFault(f: Fault, entry: ProxyRecord, res: ServerResponse, clientGone: () => boolean) {
  entry.fault = f.kind;
  if (f.kind === 'status') {
    const headers: Record<string, string> = { 'content-type': 'application/json' };
    if (f.retryAfter !== undefined) headers['retry-after'] = f.retryAfter;
    res.writeHead(f.status, headers).end(statusBody(f.status));
    entry.status = f.status;
    return true;
  }
  await new Promise((r) => setTimeout(r, f.ms));
  if (f.kind === 'hang' || (f.onlyIfConnected && clientGone())) {
    res.destroy();
    return true;
  }
  return false;
}

async function handle(state: ProxyState, req: IncomingMessage, res: ServerResponse): Promise<void> {
  const body = await readBody(req);
  // Logged on arrival, so a request still held by a fault is already visible; completed below.
  const entry: ProxyRecord = describe(req, body);
  state.log.push(entry);
  let gone = false;
  res.once('close', () => {
    gone = true;
  });
  const rule = state.rules.find((r) => r.times > 0 && r.method === entry.method && r.path.test(entry.path));
  if (rule) {
    rule.times--;
    state.counts.set(rule.fault.kind, (state.counts.get(rule.fault.kind) ?? 0) + 1);
    if (await applyFault(rule.fault, entry, res, () => gone)) return;
  }
  entry.status = await forward(state.upstreamPort, req, body, res);
}

/**
 * An HTTPS proxy in front of the apiserver that terminates TLS with the apiserver's own certificate
 * (so the agent's kubeconfig keeps verifying it: see kubeconfigThrough) and injects faults per rule.
 */
export async function faultProxy(cp: ControlPlane): Promise<FaultProxy> {
  const certDir = join(cp.workDir, 'certs');
  const state: ProxyState = { upstreamPort: cp.port, rules: [], log: [], counts: new Map() };
  const server: Server = createServer(
    { key: readFileSync(join(certDir, 'apiserver.key')), cert: readFileSync(join(certDir, 'apiserver.crt')) },
    (req, res) => void handle(state, req, res).catch(() => res.destroy()),
  );
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const { counts } = state;
  return {
    port: (server.address() as { port: number }).port,
    log: state.log,
    inject: (rule) => state.rules.push(rule),
    injected: (kind) => (kind ? (counts.get(kind) ?? 0) : [...counts.values()].reduce((a, b) => a + b, 0)),
    close: () =>
      new Promise<void>((r) => {
        server.closeAllConnections();
        server.close(() => r());
      }),
  };
}
