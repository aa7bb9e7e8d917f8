import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { createRegistry } from '../../../src/core/metrics.ts';
import { KubeClient } from '../../../src/kube/client.ts';
import { ApiError } from '../../../src/kube/errors.ts';
import { json, plainConnection, startFakeApiServer } from '../../support/fake-apiserver.ts';

describe('KubeClient routing and credentials', () => {
  it('keeps a path prefix of the server URL and escapes names', async () => {
    const srv = await startFakeApiServer((_req, res) => json(res, 200, {}));
    const connection = plainConnection(`${srv.url}/k8s/clusters/c-1`);
    const c = new KubeClient({ connection, version: 'x', registry: createRegistry() });
    await c.patchEvent('kube system', 'a/b', { count: 2 });
    assert.equal(srv.requests[0]?.url, '/k8s/clusters/c-1/api/v1/namespaces/kube%20system/events/a%2Fb');
    c.close();
    await srv.close();
  });

  it('reports a failing credential source as a retriable error and sends nothing', async () => {
    const srv = await startFakeApiServer((_req, res) => json(res, 200, {}));
    const connection = plainConnection(srv.url, {
      authHeaders: async () => {
        throw new Error('exec plugin failed');
      },
    });
    const c = new KubeClient({ connection, version: 'x', registry: createRegistry() });
    await assert.rejects(c.getNode('n'), (err: unknown) => {
      assert.ok(err instanceof ApiError);
      assert.equal(err.statusCode, undefined);
      assert.match(err.message, /exec plugin failed/);
      return true;
    });
    assert.equal(srv.requests.length, 0);
    c.close();
    await srv.close();
  });
});
