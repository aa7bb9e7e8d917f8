// API response bodies are read up to MAX_BODY_BYTES: a bigger one is a counted transport failure, and
// the request is cut off while the server is still sending, so memory stays bounded by the cap.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { createRegistry } from '../../../src/core/metrics.ts';
import { KubeClient } from '../../../src/kube/client.ts';
import { ApiError } from '../../../src/kube/errors.ts';
import { MAX_BODY_BYTES } from '../../../src/kube/http.ts';
import { json, plainConnection, startFakeApiServer } from '../../support/fake-apiserver.ts';

const node = (annotationBytes: number) => ({
  kind: 'Node',
  metadata: { name: 'n', uid: 'u', annotations: { big: 'x'.repeat(annotationBytes) } },
  status: { conditions: [] },
});

describe('API response body cap', () => {
  it('is 4 MiB: a 10 MB Node is refused and counted, a 3 MiB one is read', async () => {
    assert.equal(MAX_BODY_BYTES, 4 * 1024 * 1024);
    let size = 10_000_000;
    const srv = await startFakeApiServer((_req, res) => json(res, 200, node(size)));
    const registry = createRegistry();
    const c = new KubeClient({ connection: plainConnection(srv.url), version: 'v1', registry });
    const err = await c.getNode('n').then(
      () => assert.fail('a 10 MB body was accepted'),
      (e: unknown) => e,
    );
    assert.ok(err instanceof ApiError);
    assert.match(err.message, /response body over 4194304 bytes/);
    assert.equal(err.statusCode, undefined, 'a transport failure, retried like one');
    size = 3 * 1024 * 1024;
    assert.equal((await c.getNode('n')).name, 'n');
    const total = await registry.getSingleMetric('npd_apiserver_requests_total')?.get();
    assert.deepEqual(
      total?.values.map((v) => [v.labels.code, v.value]),
      [
        ['error', 1],
        ['200', 1],
      ],
    );
    c.close();
    await srv.close();
  });

  it('stops reading a body that never ends', async () => {
    let sent = 0;
    let closed: () => void = () => {};
    const gone = new Promise<void>((r) => {
      closed = r;
    });
    const srv = await startFakeApiServer((_req, res) => {
      res.writeHead(200, { 'content-type': 'application/json' });
      const chunk = Buffer.alloc(64 * 1024, 0x20);
      const pump = () => {
        while (!res.destroyed && sent < 256 * 1024 * 1024 && res.write(chunk)) sent += chunk.length;
        if (!res.destroyed && sent < 256 * 1024 * 1024) res.once('drain', pump);
      };
      res.on('close', () => closed());
      pump();
    });
    const c = new KubeClient({
      connection: plainConnection(srv.url),
      version: 'v1',
      registry: createRegistry(),
    });
    await assert.rejects(c.getNode('n'), /response body over/);
    await gone;
    assert.ok(sent < 4 * MAX_BODY_BYTES, `the server got to send ${sent} bytes`);
    c.close();
    await srv.close();
  });
});
