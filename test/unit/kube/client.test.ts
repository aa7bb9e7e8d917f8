import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, it } from 'node:test';
import type { Registry } from 'prom-client';
import { FakeClock } from '../../../src/core/clock.ts';
import { SinkError } from '../../../src/core/errors.ts';
import { createRegistry } from '../../../src/core/metrics.ts';
import { KubeClient } from '../../../src/kube/client.ts';
import { resolveConnection } from '../../../src/kube/config.ts';
import type { ApiConnection } from '../../../src/kube/connection.ts';
import { ApiError } from '../../../src/kube/errors.ts';
import { json, plainConnection, startFakeApiServer, status } from '../../support/fake-apiserver.ts';
import { caCert, clientCert, clientKey } from '../../support/tls-fixtures.ts';

const NODE = {
  apiVersion: 'v1',
  kind: 'Node',
  metadata: { name: 'node-1', uid: '4f1c-uid', annotations: { a: 'b', n: 1 } },
  spec: { taints: [{ key: 'k', effect: 'NoSchedule' }] },
  status: {
    conditions: [{ type: 'Ready', status: 'True' }],
    capacity: { cpu: '96', 'nvidia.com/gpu': '8' },
  },
};

const plain = plainConnection;

/** A kubeconfig with an inline CA, a token, a client certificate file (relative) and inline key. */
function writeKubeconfig(dir: string, server: string): string {
  const b64 = (s: string) => Buffer.from(s).toString('base64');
  writeFileSync(join(dir, 'client.crt'), clientCert);
  const path = join(dir, 'kubeconfig');
  const lines = [
    'apiVersion: v1',
    'kind: Config',
    'current-context: npd',
    'clusters:',
    `- name: c1\n  cluster:\n    server: ${server}/\n    certificate-authority-data: ${b64(caCert)}`,
    'contexts:',
    '- name: npd\n  context:\n    cluster: c1\n    user: u1',
    'users:',
    `- name: u1\n  user:\n    token: s3cr3t\n    client-certificate: client.crt\n    client-key-data: ${b64(clientKey)}`,
  ];
  writeFileSync(path, lines.join('\n'));
  return path;
}

function client(
  connection: ApiConnection,
  extra: { clock?: FakeClock; registry?: Registry; timeoutMs?: number } = {},
) {
  return new KubeClient({
    connection,
    version: 'v1.2.3',
    registry: extra.registry ?? createRegistry(),
    ...extra,
  });
}

async function rejection(p: Promise<unknown>): Promise<ApiError> {
  try {
    await p;
  } catch (err) {
    assert.ok(err instanceof ApiError, `expected ApiError, got ${String(err)}`);
    assert.ok(err instanceof SinkError);
    return err;
  }
  assert.fail('expected a rejection');
}

const tmp = mkdtempSync(join(tmpdir(), 'npd-client-'));
after(() => rmSync(tmp, { recursive: true, force: true }));

describe('KubeClient over HTTP', () => {
  it('gets a node with resourceVersion=0, JSON accept and the NPD user agent', async () => {
    const srv = await startFakeApiServer((_req, res) => json(res, 200, NODE));
    const c = client(plain(srv.url));
    const node = await c.getNode('node-1', { resourceVersion: '0' });
    assert.deepEqual(node, {
      name: 'node-1',
      uid: '4f1c-uid',
      conditions: [{ type: 'Ready', status: 'True' }],
      annotations: { a: 'b' },
      taints: [{ key: 'k', effect: 'NoSchedule' }],
      capacity: { cpu: '96', 'nvidia.com/gpu': '8' },
    });
    const [req] = srv.requests;
    assert.equal(req?.method, 'GET');
    assert.equal(req?.url, '/api/v1/nodes/node-1?resourceVersion=0');
    assert.equal(req?.headers['user-agent'], 'node-problem-detector/v1.2.3');
    assert.equal(req?.headers.accept, 'application/json');
    assert.equal(req?.headers['content-type'], undefined);
    c.close();
    await srv.close();
  });

  it('patches node status and events as strategic merge, and posts events as JSON', async () => {
    const srv = await startFakeApiServer((req, res) => json(res, req.method === 'POST' ? 201 : 200, NODE));
    const c = client(plain(srv.url));
    await c.patchNodeStatus('node-1', { status: { conditions: [{ type: 'A', status: 'True' }] } });
    await c.createEvent('default', { metadata: { name: 'e1' } });
    await c.patchEvent('default', 'e1', { count: 2 });
    assert.deepEqual(
      srv.requests.map((r) => [r.method, r.url, r.headers['content-type'], r.body]),
      [
        [
          'PATCH',
          '/api/v1/nodes/node-1/status',
          'application/strategic-merge-patch+json',
          '{"status":{"conditions":[{"type":"A","status":"True"}]}}',
        ],
        ['POST', '/api/v1/namespaces/default/events', 'application/json', '{"metadata":{"name":"e1"}}'],
        [
          'PATCH',
          '/api/v1/namespaces/default/events/e1',
          'application/strategic-merge-patch+json',
          '{"count":2}',
        ],
      ],
    );
    assert.equal(srv.requests[0]?.headers['content-length'], String(srv.requests[0]?.body.length));
    c.close();
    await srv.close();
  });

  it('turns a 404 Status into a SinkError with status code and reason', async () => {
    const srv = await startFakeApiServer((_req, res) =>
      status(res, 404, 'NotFound', 'events "e1" not found'),
    );
    const c = client(plain(srv.url));
    const err = await rejection(c.patchEvent('default', 'e1', { count: 2 }));
    assert.equal(err.statusCode, 404);
    assert.equal(err.reason, 'NotFound');
    assert.equal(err.retryAfterMs, undefined);
    assert.match(
      err.message,
      /PATCH \/api\/v1\/namespaces\/default\/events\/e1: 404 NotFound: events "e1" not found/,
    );
    c.close();
    await srv.close();
  });

  it('keeps the reason of a 409 so AlreadyExists can be told from Conflict', async () => {
    const srv = await startFakeApiServer((_req, res) => status(res, 409, 'AlreadyExists', 'already exists'));
    const c = client(plain(srv.url));
    const err = await rejection(c.createEvent('default', {}));
    assert.deepEqual([err.statusCode, err.reason], [409, 'AlreadyExists']);
    c.close();
    await srv.close();
  });

  it('carries Retry-After on 429 and 5xx only', async () => {
    const answers = [
      [429, 'TooManyRequests', { 'retry-after': '7' }],
      [503, 'ServiceUnavailable', { 'retry-after': '2' }],
      [500, 'InternalError', {}],
      [403, 'Forbidden', { 'retry-after': '5' }],
    ] as const;
    let i = 0;
    const srv = await startFakeApiServer((_req, res) => {
      const [code, reason, headers] = answers[i++] ?? answers[0];
      status(res, code, reason, 'no', headers);
    });
    const c = client(plain(srv.url));
    const got = [];
    for (let n = 0; n < answers.length; n++) {
      const err = await rejection(c.createEvent('default', {}));
      got.push([err.statusCode, err.reason, err.retryAfterMs]);
    }
    assert.deepEqual(got, [
      [429, 'TooManyRequests', 7000],
      [503, 'ServiceUnavailable', 2000],
      [500, 'InternalError', undefined],
      [403, 'Forbidden', undefined],
    ]);
    c.close();
    await srv.close();
  });

  it('times out on the injected clock with a SinkError without status', async () => {
    const srv = await startFakeApiServer(() => {
      // never answers
    });
    const clock = new FakeClock();
    const registry = createRegistry();
    const c = client(plain(srv.url), { clock, registry, timeoutMs: 2500 });
    const arrived = srv.nextRequest();
    const pending = rejection(c.getNode('node-1'));
    await arrived;
    clock.advance(2499);
    clock.advance(1);
    const err = await pending;
    assert.equal(err.statusCode, undefined);
    assert.match(err.message, /timed out after 2500ms/);
    const total = await registry.getSingleMetric('npd_apiserver_requests_total')?.get();
    assert.deepEqual(
      total?.values.map((v) => [v.labels, v.value]),
      [[{ verb: 'GET', resource: 'nodes', code: 'error' }, 1]],
    );
    c.close();
    await srv.close();
  });

  it('reports a refused connection as a SinkError without status', async () => {
    const srv = await startFakeApiServer(() => {});
    const url = srv.url;
    await srv.close();
    const c = client(plain(url));
    const err = await rejection(c.getNode('node-1'));
    assert.equal(err.statusCode, undefined);
    assert.match(err.message, /ECONNREFUSED/);
    c.close();
  });

  it('treats an unparsable 2xx body as a transport failure', async () => {
    const srv = await startFakeApiServer((_req, res) => {
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end('{"kind":');
    });
    const c = client(plain(srv.url));
    const err = await rejection(c.createEvent('default', {}));
    assert.equal(err.statusCode, undefined);
    c.close();
    await srv.close();
  });

  it('measures every request by verb, resource and code', async () => {
    const srv = await startFakeApiServer((req, res) =>
      req.method === 'GET' ? json(res, 200, NODE) : status(res, 422, 'Invalid', 'bad'),
    );
    const registry = createRegistry();
    const c = client(plain(srv.url), { registry });
    await c.getNode('node-1');
    await rejection(c.createEvent('default', {}));
    const total = await registry.getSingleMetric('npd_apiserver_requests_total')?.get();
    assert.deepEqual(
      total?.values.map((v) => [v.labels, v.value]),
      [
        [{ verb: 'GET', resource: 'nodes', code: '200' }, 1],
        [{ verb: 'POST', resource: 'events', code: '422' }, 1],
      ],
    );
    const text = await registry.getSingleMetricAsString('npd_apiserver_request_duration_seconds');
    assert.match(
      text,
      /npd_apiserver_request_duration_seconds_count\{verb="GET",resource="nodes",code="200"\} 1/,
    );
    c.close();
    await srv.close();
  });
});

describe('KubeClient over HTTPS', () => {
  it('uses the CA, bearer token and client certificate from a kubeconfig', async () => {
    const srv = await startFakeApiServer((_req, res) => json(res, 200, NODE), {
      tls: true,
      requestCert: true,
    });
    const path = writeKubeconfig(tmp, srv.url);
    const connection = await resolveConnection({ kubeconfig: path, env: {} });
    assert.ok(connection);
    const c = client(connection);
    assert.equal((await c.getNode('node-1')).uid, '4f1c-uid');
    assert.equal(srv.requests[0]?.headers.authorization, 'Bearer s3cr3t');
    assert.equal(srv.requests[0]?.clientCN, 'system:node:node-1');
    c.close();
    await srv.close();
  });

  it('rejects an unknown CA unless insecure-skip-tls-verify is set', async () => {
    const srv = await startFakeApiServer((_req, res) => json(res, 200, NODE), { tls: true });
    const strict = client(plain(srv.url));
    const err = await rejection(strict.getNode('node-1'));
    assert.equal(err.statusCode, undefined);
    strict.close();
    const tls = {
      ca: undefined,
      cert: undefined,
      key: undefined,
      insecureSkipTLSVerify: true,
      serverName: undefined,
    };
    const insecure = client(plain(srv.url, { tls }));
    assert.equal((await insecure.getNode('node-1')).name, 'node-1');
    insecure.close();
    await srv.close();
  });
});
