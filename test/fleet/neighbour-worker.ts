/**
 * The neighbour (forked by neighbour.ts): a kubelet-like client per node renewing its Lease in
 * kube-node-lease every period, as the kubelet's node lease controller does (an update of the whole
 * Lease with a new renewTime; on a conflict, a fresh read and one more update), each node with its own
 * keep-alive connection and its own phase in the period. Every renewal's latency is recorded here, in a
 * process of its own, so the parent's audit-log reading does not delay it.
 */
import https from 'node:https';

interface Lease {
  readonly name: string;
  readonly token: string;
  readonly agent: https.Agent;
  object: Record<string, unknown> | undefined;
}

/** [start ms, latency ms, HTTP status or 0 for a transport failure] */
type Sample = [number, number, number];

const samples: Sample[] = [];
const flowSchemas = new Set<string>();
let url = '';
let periodMs = 10_000;
let running = false;
const PATH = '/apis/coordination.k8s.io/v1/namespaces/kube-node-lease/leases';

function call(
  l: Lease,
  method: string,
  path: string,
  body?: unknown,
): Promise<{ status: number; json: unknown }> {
  return new Promise((resolve) => {
    const payload = body === undefined ? undefined : JSON.stringify(body);
    const headers: Record<string, string> = {
      Authorization: `Bearer ${l.token}`,
      Accept: 'application/json',
    };
    if (payload) headers['Content-Type'] = 'application/json';
    const req = https.request(
      `${url}${path}`,
      { method, headers, agent: l.agent, timeout: 10_000 },
      (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (c: Buffer) => chunks.push(c));
        res.on('end', () => {
          const fs = res.headers['x-kubernetes-pf-flowschema-uid'];
          if (typeof fs === 'string') flowSchemas.add(fs);
          let json: unknown;
          try {
            json = JSON.parse(Buffer.concat(chunks).toString('utf8'));
          } catch {
            json = undefined;
          }
          resolve({ status: res.statusCode ?? 0, json });
        });
        res.on('error', () => resolve({ status: 0, json: undefined }));
      },
    );
    req.on('timeout', () => req.destroy(new Error('timeout')));
    req.on('error', () => resolve({ status: 0, json: undefined }));
    req.end(payload);
  });
}

const microTime = () => new Date().toISOString().replace(/\.(\d{3})Z$/, '.$1000Z');

async function renew(l: Lease): Promise<void> {
  const t0 = performance.now();
  const at = Date.now();
  let r: { status: number; json: unknown };
  if (!l.object) {
    const spec = { holderIdentity: l.name, leaseDurationSeconds: 40, renewTime: microTime() };
    r = await call(l, 'POST', PATH, { metadata: { name: l.name, namespace: 'kube-node-lease' }, spec });
    if (r.status === 409) r = await call(l, 'GET', `${PATH}/${l.name}`);
  } else {
    const spec = { ...(l.object.spec as object), renewTime: microTime() };
    r = await call(l, 'PUT', `${PATH}/${l.name}`, { ...l.object, spec });
    if (r.status === 409) r = await call(l, 'GET', `${PATH}/${l.name}`);
  }
  if (r.status === 200 || r.status === 201) l.object = r.json as Record<string, unknown>;
  samples.push([at, performance.now() - t0, r.status]);
}

async function loop(l: Lease): Promise<void> {
  await new Promise((r) => setTimeout(r, Math.random() * periodMs));
  while (running) {
    const started = Date.now();
    await renew(l);
    await new Promise((r) => setTimeout(r, Math.max(0, periodMs - (Date.now() - started))));
  }
}

function stats(from: number, to: number): unknown {
  const window = samples.filter((s) => s[0] >= from && s[0] < to);
  const ok = window.filter((s) => s[2] >= 200 && s[2] < 300).map((s) => s[1]);
  const codes: Record<string, number> = {};
  for (const s of window) codes[String(s[2])] = (codes[String(s[2])] ?? 0) + 1;
  return { count: window.length, latencies: ok, codes, flowSchemas: [...flowSchemas] };
}

type Msg =
  | { id: number; cmd: 'start'; url: string; periodMs: number; leases: { name: string; token: string }[] }
  | { id: number; cmd: 'stats'; from: number; to: number }
  | { id: number; cmd: 'stop' };

process.on('message', (m: Msg) => {
  if (m.cmd === 'start') {
    url = m.url;
    periodMs = m.periodMs;
    running = true;
    for (const { name, token } of m.leases) {
      const agent = new https.Agent({ keepAlive: true, maxSockets: 1, rejectUnauthorized: false });
      void loop({ name, token, agent, object: undefined });
    }
    process.send?.({ id: m.id, result: m.leases.length });
  } else if (m.cmd === 'stats') process.send?.({ id: m.id, result: stats(m.from, m.to) });
  else {
    running = false;
    process.send?.({ id: m.id, result: samples.length });
  }
});
process.on('disconnect', () => process.exit(0));
