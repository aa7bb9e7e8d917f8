import assert from 'node:assert/strict';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { describe, it, type TestContext } from 'node:test';
import { FakeClock } from '../../../src/core/clock.ts';
import { type UploadPolicy, uploadBundle, uploadPolicy } from '../../../src/diagnostics/upload.ts';

const body = Buffer.from('bundle');

async function target(t: TestContext, answer: (res: http.ServerResponse) => void) {
  let requests = 0;
  const server = http.createServer((req, res) => {
    requests++;
    req.resume();
    req.on('end', () => answer(res));
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  t.after(() => server.close());
  const port = (server.address() as AddressInfo).port;
  return { port, requests: () => requests };
}

const policy = (over: Partial<Parameters<typeof uploadPolicy>[0]> = {}): UploadPolicy =>
  uploadPolicy({ allowed: [], nodeAddresses: () => ['10.1.2.3', 'fd00::3'], ...over });

const upload = (url: string, p: UploadPolicy) => uploadBundle(url, body, new FakeClock(), p);

describe('uploadBundle refuses addresses on the node', () => {
  for (const url of [
    'http://127.0.0.1:PORT/b',
    'http://127.7.7.7:PORT/b',
    'http://localhost:PORT/b',
    'http://[::1]:PORT/b',
    'http://[::ffff:127.0.0.1]:PORT/b',
    'http://169.254.169.254/latest/meta-data',
    'http://[fe80::1]/x',
    'http://0.0.0.0:PORT/b',
    'http://10.1.2.3:10250/pods',
    'http://[fd00::3]:10250/pods',
  ])
    it(`refuses ${url} without connecting`, async (t) => {
      const srv = await target(t, (res) => res.writeHead(200).end());
      await assert.rejects(
        upload(url.replace('PORT', String(srv.port)), policy()),
        (err: Error) => err.message === 'uploadURL refused: it is a loopback, link-local or node address',
      );
      assert.equal(srv.requests(), 0);
    });

  it("refuses the Node's own addresses, which may come from the API (the pod network case)", async (t) => {
    const srv = await target(t, (res) => res.writeHead(200).end());
    const fromApi = policy({ nodeAddresses: async () => ['192.0.2.10'] });
    await assert.rejects(upload('http://192.0.2.10:10250/pods', fromApi), /refused/);
    const other = policy({ allowed: ['127.0.0.1'], nodeAddresses: async () => ['192.0.2.10'] });
    await upload(`http://127.0.0.1:${srv.port}/b`, other);
    assert.equal(srv.requests(), 1);
  });

  it('uploads to an address an operator allowed, by address or CIDR', async (t) => {
    const srv = await target(t, (res) => res.writeHead(200).end());
    await upload(`http://127.0.0.1:${srv.port}/b`, policy({ allowed: ['127.0.0.1'] }));
    await upload(`http://127.0.0.1:${srv.port}/b`, policy({ allowed: ['127.0.0.0/8'] }));
    assert.equal(srv.requests(), 2);
  });

  it('reports a fixed set of outcomes: never the status code, body or host:port', async (t) => {
    const allow = policy({ allowed: ['127.0.0.1'] });
    const s403 = await target(t, (res) =>
      res.writeHead(403).end('<Error><Code>SignatureDoesNotMatch</Code></Error>'),
    );
    await assert.rejects(upload(`http://127.0.0.1:${s403.port}/b`, allow), {
      message: 'upload refused by the target (HTTP 4xx)',
    });
    const s502 = await target(t, (res) => res.writeHead(502).end('<Code>InternalServiceName</Code>'));
    await assert.rejects(upload(`http://127.0.0.1:${s502.port}/b`, allow), {
      message: 'upload failed at the target (HTTP 5xx)',
    });
    const s302 = await target(t, (res) => res.writeHead(302, { location: '/x' }).end());
    await assert.rejects(upload(`http://127.0.0.1:${s302.port}/b`, allow), {
      message: 'upload target gave an answer that is not a success',
    });
    const closed = await target(t, () => {});
    await new Promise((r) => setImmediate(r));
    await assert.rejects(upload('http://127.0.0.1:1/b', allow), { message: 'upload target unreachable' });
    assert.equal(closed.requests(), 0);
    await assert.rejects(upload('ftp://x/b', allow), { message: 'uploadURL is not an http or https URL' });
    await assert.rejects(upload('not a url', allow), { message: 'uploadURL is not an http or https URL' });
  });

  it('checks every address a name resolves to, and connects only to a checked one', async (t) => {
    const srv = await target(t, (res) => res.writeHead(200).end());
    const lookups: string[] = [];
    const twoFaced = policy({
      lookup: async (host) => {
        lookups.push(host);
        return ['203.0.113.9', '127.0.0.1'];
      },
    });
    await assert.rejects(upload(`http://bucket.example:${srv.port}/b`, twoFaced), /refused/);
    const pinned = policy({ allowed: ['127.0.0.1'], lookup: async () => ['127.0.0.1'] });
    await upload(`http://bucket.example:${srv.port}/b`, pinned);
    assert.equal(srv.requests(), 1, 'connected to the address checked, not a second lookup');
    assert.deepEqual(lookups, ['bucket.example']);
  });
});
