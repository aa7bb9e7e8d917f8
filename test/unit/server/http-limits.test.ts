// Connection limits of the status and metrics listeners: half-sent requests are closed by the headers
// timeout, and past the per-listener connection cap the oldest connection that is not being answered
// makes room (counted), so /healthz keeps answering while someone holds every slot.
import assert from 'node:assert/strict';
import { connect, type Socket } from 'node:net';
import { after, before, describe, it } from 'node:test';
import { createRegistry } from '../../../src/core/metrics.ts';
import { HttpServers } from '../../../src/server/http.ts';
import { freePort } from '../../support/agent-process.ts';

function endpoints() {
  return {
    health: () => ({ ok: true, detail: 'fine\n' }),
    ready: () => ({ ok: true, detail: 'fine\n' }),
    conditions: () => [],
    registry: createRegistry(),
  };
}

/** A connection that sends the start of a request and never finishes its headers. */
function halfSent(port: number): Promise<Socket> {
  return new Promise((resolve, reject) => {
    const s = connect(port, '127.0.0.1');
    s.on('error', () => {});
    // Read what the server sends (its 408), so its close reaches us.
    s.resume();
    s.once('connect', () => {
      s.write('GET /healthz HTTP/1.1\r\nHost: x\r\n');
      resolve(s);
    });
    s.once('error', reject);
  });
}

async function until(check: () => boolean, ms: number): Promise<void> {
  const end = Date.now() + ms;
  while (!check()) {
    if (Date.now() > end) throw new Error('condition not met in time');
    await new Promise((r) => setTimeout(r, 20));
  }
}

describe('HttpServers connection limits', () => {
  const servers = new HttpServers({ maxConnections: 8, headersTimeoutMs: 600, checkIntervalMs: 100 });
  const e = endpoints();
  let status = 0;
  let metrics = 0;
  const sockets: Socket[] = [];

  before(async () => {
    // Port 0 means "disabled" (NPD's --port=0), so the test picks free ports itself.
    const ports = [await freePort(), await freePort()];
    await servers.listen(
      e,
      { address: '127.0.0.1', port: ports[0] as number },
      { address: '127.0.0.1', port: ports[1] as number },
    );
    [status, metrics] = servers.ports() as [number, number];
  });
  after(async () => {
    for (const s of sockets) s.destroy();
    await servers.close();
  });

  it('answers /healthz while half-sent requests hold every slot, evicting the oldest (counted)', async () => {
    for (let i = 0; i < 40; i++) sockets.push(await halfSent(status));
    for (let i = 0; i < 40; i++) sockets.push(await halfSent(metrics));
    // Let the server see every connection before the probe arrives.
    await new Promise((r) => setTimeout(r, 100));
    const health = await fetch(`http://127.0.0.1:${status}/healthz`);
    assert.equal(health.status, 200);
    const scrape = await fetch(`http://127.0.0.1:${metrics}/metrics`);
    assert.equal(scrape.status, 200);
    const text = await scrape.text();
    const evicted = (listener: string) =>
      Number(
        new RegExp(`^npd_http_connections_evicted_total\\{listener="${listener}"\\} (\\d+)$`, 'm').exec(
          text,
        )?.[1],
      );
    assert.ok(evicted('status') >= 40 - 8, `status evictions ${evicted('status')}`);
    assert.ok(evicted('metrics') >= 40 - 8, `metrics evictions ${evicted('metrics')}`);
    const open = sockets.filter((s) => !s.closed).length;
    assert.ok(open <= 2 * 8, `${open} connections still open; the cap is 8 per listener`);
  });

  it('closes a half-sent request once the headers timeout passes', async () => {
    const s = await halfSent(status);
    sockets.push(s);
    await until(() => s.closed, 5000);
  });

  it('closes a connection that never sends anything', async () => {
    const s = await new Promise<Socket>((resolve) => {
      const c = connect(status, '127.0.0.1');
      c.on('error', () => {});
      c.resume();
      c.once('connect', () => resolve(c));
    });
    sockets.push(s);
    await until(() => s.closed, 5000);
  });
});
