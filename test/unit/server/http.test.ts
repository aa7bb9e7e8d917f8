import assert from 'node:assert/strict';
import { createServer } from 'node:net';
import { after, before, describe, it } from 'node:test';
import { createRegistry } from '../../../src/core/metrics.ts';
import type { Condition } from '../../../src/core/types.ts';
import { type Endpoints, HttpServers, type Probe } from '../../../src/server/http.ts';

const CONDITIONS: Condition[] = [
  {
    type: 'KernelDeadlock',
    status: 'False',
    transition: Date.UTC(2026, 0, 1, 12),
    reason: 'KernelHasNoDeadlock',
    message: 'kernel has no deadlock',
  },
  {
    type: 'ReadonlyFilesystem',
    status: 'True',
    transition: Date.UTC(2026, 0, 2),
    reason: 'FilesystemIsReadOnly',
    message: 'Remounting filesystem read-only',
    evidence: { source: 'kernel-monitor', plugin: 'kmsg', trust: 'kernel' },
  },
  // The subsystem types mean a problem when False (src/core/polarity.ts).
  {
    type: 'KernelReady',
    status: 'False',
    transition: Date.UTC(2026, 0, 3),
    reason: 'XfsHasShutdown',
    message: 'fatal: XFS (sda1): Filesystem has been shut down',
  },
  {
    type: 'StorageReady',
    status: 'True',
    transition: Date.UTC(2026, 0, 3),
    reason: 'StorageIsHealthy',
    message: 'no storage problem',
  },
  // A probe that could not decide: neither a problem nor healthy, shown as it is.
  {
    type: 'NTPProblem',
    status: 'Unknown',
    transition: Date.UTC(2026, 0, 4),
    reason: 'ProbeTimedOut',
    message: 'the probe timed out',
  },
];

function endpoints(): Endpoints & { healthState: Probe; readyState: Probe } {
  const registry = createRegistry();
  const e = {
    healthState: { ok: true, detail: 'kernel-monitor: healthy\n' } as Probe,
    readyState: { ok: false, detail: 'waiting for first condition sync\n' } as Probe,
    health: () => e.healthState,
    ready: () => e.readyState,
    conditions: () => CONDITIONS,
    registry,
  };
  return e;
}

/** Distinct free ports: all probe sockets stay open until every port is known. */
async function freePorts(n: number): Promise<number[]> {
  const probes = Array.from({ length: n }, () => createServer());
  await Promise.all(probes.map((srv) => new Promise<void>((resolve) => srv.listen(0, '127.0.0.1', resolve))));
  const ports = probes.map((srv) => (srv.address() as { port: number }).port);
  await Promise.all(probes.map((srv) => new Promise<void>((resolve) => srv.close(() => resolve()))));
  return ports;
}

const freePort = async () => (await freePorts(1))[0] as number;

const get = (port: number, path: string, init?: RequestInit) =>
  fetch(`http://127.0.0.1:${port}${path}`, init);

describe('HttpServers on separate status and metrics ports', () => {
  const servers = new HttpServers();
  const e = endpoints();
  let statusPort = 0;
  let metricsPort = 0;

  before(async () => {
    // Port 0 means "disabled" (NPD's --port=0), so the test picks free ports itself.
    const wanted = await freePorts(2);
    await servers.listen(
      e,
      { address: '127.0.0.1', port: wanted[0] as number },
      { address: '127.0.0.1', port: wanted[1] as number },
    );
    assert.deepEqual(servers.ports(), wanted);
    [statusPort, metricsPort] = wanted as [number, number];
    assert.notEqual(statusPort, metricsPort);
  });
  after(() => servers.close());

  it('/healthz answers 200 "ok" plus the detail, and 503 with the detail when unhealthy', async () => {
    const ok = await get(statusPort, '/healthz');
    assert.equal(ok.status, 200);
    assert.equal(ok.headers.get('content-type'), 'text/plain; charset=utf-8');
    assert.equal(await ok.text(), 'ok\nkernel-monitor: healthy\n');
    e.healthState = { ok: false, detail: 'kernel-monitor: dead (not started)\n' };
    const bad = await get(statusPort, '/healthz');
    assert.equal(bad.status, 503);
    assert.equal(await bad.text(), 'kernel-monitor: dead (not started)\n');
    e.healthState = { ok: true, detail: '' };
  });

  it('/readyz reflects the readiness probe', async () => {
    const notReady = await get(statusPort, '/readyz');
    assert.equal(notReady.status, 503);
    assert.equal(await notReady.text(), 'waiting for first condition sync\n');
    e.readyState = { ok: true, detail: '' };
    const ready = await get(statusPort, '/readyz?verbose');
    assert.equal(ready.status, 200);
    assert.equal(await ready.text(), 'ok\n');
  });

  it('/conditions returns the conditions as JSON with RFC 3339 transition times, their polarity and evidence', async () => {
    const res = await get(statusPort, '/conditions');
    assert.equal(res.status, 200);
    assert.equal(res.headers.get('content-type'), 'application/json');
    assert.deepEqual(await res.json(), [
      {
        type: 'KernelDeadlock',
        status: 'False',
        transition: '2026-01-01T12:00:00.000Z',
        reason: 'KernelHasNoDeadlock',
        message: 'kernel has no deadlock',
        problem: false,
        problemWhen: 'True',
        evidence: null,
      },
      {
        type: 'ReadonlyFilesystem',
        status: 'True',
        transition: '2026-01-02T00:00:00.000Z',
        reason: 'FilesystemIsReadOnly',
        message: 'Remounting filesystem read-only',
        problem: true,
        problemWhen: 'True',
        evidence: { source: 'kernel-monitor', plugin: 'kmsg', trust: 'kernel' },
      },
      {
        type: 'KernelReady',
        status: 'False',
        transition: '2026-01-03T00:00:00.000Z',
        reason: 'XfsHasShutdown',
        message: 'fatal: XFS (sda1): Filesystem has been shut down',
        problem: true,
        problemWhen: 'False',
        evidence: null,
      },
      {
        type: 'StorageReady',
        status: 'True',
        transition: '2026-01-03T00:00:00.000Z',
        reason: 'StorageIsHealthy',
        message: 'no storage problem',
        problem: false,
        problemWhen: 'False',
        evidence: null,
      },
      {
        type: 'NTPProblem',
        status: 'Unknown',
        transition: '2026-01-04T00:00:00.000Z',
        reason: 'ProbeTimedOut',
        message: 'the probe timed out',
        problem: false,
        problemWhen: 'True',
        evidence: null,
      },
    ]);
  });

  it('/conditions: a problem is exactly the status that means one, for either polarity', async () => {
    // The filter an operator runs on the endpoint: the two problems, whatever their status.
    const body = (await (await get(statusPort, '/conditions')).json()) as {
      type: string;
      problem: boolean;
    }[];
    assert.deepEqual(
      body.filter((c) => c.problem).map((c) => c.type),
      ['ReadonlyFilesystem', 'KernelReady'],
    );
  });

  it('/metrics serves the Prometheus text format from the registry, on the metrics port only', async () => {
    const { Counter } = await import('prom-client');
    new Counter({ name: 'problem_counter', help: 'h', labelNames: ['reason'], registers: [e.registry] }).inc({
      reason: 'OOMKilling',
    });
    const res = await get(metricsPort, '/metrics');
    assert.equal(res.status, 200);
    assert.equal(res.headers.get('content-type'), e.registry.contentType);
    assert.match(res.headers.get('content-type') ?? '', /^text\/plain; version=0\.0\.4/);
    assert.match(await res.text(), /^problem_counter\{reason="OOMKilling"\} 1$/m);
    assert.equal((await get(statusPort, '/metrics')).status, 404);
    assert.equal((await get(metricsPort, '/healthz')).status, 404);
  });

  it('answers 404 for unknown paths and 405 for methods other than GET and HEAD', async () => {
    const missing = await get(statusPort, '/debug/pprof/');
    assert.equal(missing.status, 404);
    assert.equal(await missing.text(), 'not found\n');
    const post = await get(statusPort, '/healthz', { method: 'POST', body: 'x' });
    assert.equal(post.status, 405);
    assert.equal(await post.text(), 'method not allowed\n');
    assert.equal((await get(metricsPort, '/metrics', { method: 'DELETE' })).status, 405);
    const head = await get(statusPort, '/healthz', { method: 'HEAD' });
    assert.equal(head.status, 200);
    assert.equal(await head.text(), '');
  });
});

describe('HttpServers listeners', () => {
  it('serves status and metrics routes from one listener when port and address are equal', async () => {
    const servers = new HttpServers();
    const port = await freePort();
    try {
      await servers.listen(endpoints(), { address: '127.0.0.1', port }, { address: '127.0.0.1', port });
      assert.deepEqual(servers.ports(), [port]);
      assert.equal((await get(port, '/healthz')).status, 200);
      assert.equal((await get(port, '/metrics')).status, 200);
      assert.equal((await get(port, '/conditions')).status, 200);
    } finally {
      await servers.close();
    }
    assert.deepEqual(servers.ports(), []);
  });

  it('disables a listener whose port is 0, as NPD does', async () => {
    const servers = new HttpServers();
    await servers.listen(endpoints(), { address: '127.0.0.1', port: 0 }, { address: '127.0.0.1', port: 0 });
    assert.deepEqual(servers.ports(), []);
    const metricsOnly = new HttpServers();
    const port = await freePort();
    await metricsOnly.listen(endpoints(), { address: '127.0.0.1', port: 0 }, { address: '127.0.0.1', port });
    assert.deepEqual(metricsOnly.ports(), [port]);
    assert.equal((await get(port, '/healthz')).status, 404);
    await metricsOnly.close();
  });

  it('rejects when a port is already taken', async () => {
    const first = new HttpServers();
    const taken = await freePort();
    await first.listen(endpoints(), { address: '127.0.0.1', port: taken }, { address: '127.0.0.1', port: 0 });
    const second = new HttpServers();
    try {
      await assert.rejects(
        second.listen(endpoints(), { address: '127.0.0.1', port: taken }, { address: '127.0.0.1', port: 0 }),
        /EADDRINUSE/,
      );
    } finally {
      await first.close();
      await second.close();
    }
  });
});
