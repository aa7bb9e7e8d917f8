import assert from 'node:assert/strict';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { after, describe, it } from 'node:test';
import { FakeClock } from '../../../../src/core/clock.ts';
import { env, fakeHost, probe, runOne, T0 } from './helpers.ts';

async function listen(server: Server): Promise<number> {
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return (server.address() as AddressInfo).port;
}

describe('kubelet probe against a local healthz server', async () => {
  let answer = { status: 200, body: 'ok' };
  let hang = false;
  const paths: string[] = [];
  const server = createServer((req, res) => {
    paths.push(req.url ?? '');
    if (hang) return;
    res.writeHead(answer.status, { 'content-type': 'text/plain' });
    res.end(answer.body);
  });
  const port = await listen(server);
  after(() => {
    server.closeAllConnections();
    server.close();
  });
  const clock = new FakeClock(T0);
  const e = env(await fakeHost({}), clock);

  it('is OK on 200 and uses NPD names', async () => {
    const r = await runOne(probe({ kind: 'kubelet', port }, e));
    assert.equal(r.status, 'OK');
    assert.equal(r.message, `kubelet http://127.0.0.1:${port}/healthz: ok`);
    assert.equal(r.rule.condition, 'KubeletUnhealthy');
    assert.equal(paths.at(-1), '/healthz');
  });

  it('is NonOK with the failing checks when healthz says so', async () => {
    answer = { status: 500, body: '[+]ping ok\n[-]syncloop failed: reason withheld\nhealthz check failed\n' };
    try {
      const r = await runOne(probe({ kind: 'kubelet', port }, e));
      assert.equal(r.status, 'NonOK');
      assert.equal(
        r.message,
        `kubelet http://127.0.0.1:${port}/healthz returned 500: [+]ping ok [-]syncloop failed: reason withheld healthz check failed`,
      );
    } finally {
      answer = { status: 200, body: 'ok' };
    }
  });

  it('tells a refused connection from a hung kubelet', async () => {
    const closed = createServer();
    const closedPort = await listen(closed);
    await new Promise((resolve) => closed.close(resolve));
    const refused = await runOne(probe({ kind: 'kubelet', port: closedPort }, e));
    assert.equal(refused.status, 'NonOK');
    assert.equal(refused.message, `kubelet is not listening on http://127.0.0.1:${closedPort}/healthz`);

    hang = true;
    try {
      const seen = paths.length;
      const pending = runOne(probe({ kind: 'kubelet', port, requestTimeout: '1s' }, e));
      while (paths.length === seen) await new Promise((r) => setTimeout(r, 5));
      clock.advance(1000);
      const hung = await pending;
      assert.equal(hung.status, 'NonOK');
      assert.equal(hung.message, `kubelet http://127.0.0.1:${port}/healthz did not answer within 1s`);
    } finally {
      hang = false;
    }
  });

  it('rethrows when the monitor aborts the run (stop or probe timeout)', async () => {
    hang = true;
    try {
      const controller = new AbortController();
      const seen = paths.length;
      const pending = probe({ kind: 'kubelet', port }, e).check({ signal: controller.signal });
      while (paths.length === seen) await new Promise((r) => setTimeout(r, 5));
      controller.abort(new Error('monitor stopped'));
      await assert.rejects(pending, /monitor stopped/);
    } finally {
      hang = false;
    }
  });
});
