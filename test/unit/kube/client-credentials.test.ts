// Credentials count inside the request deadline: a credential source that hangs fails the request at
// its deadline (counted as a credential failure and as a transport error) instead of stalling it, and
// the time credentials took is taken off what the request itself may use.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { FakeClock } from '../../../src/core/clock.ts';
import { createRegistry } from '../../../src/core/metrics.ts';
import { KubeClient } from '../../../src/kube/client.ts';
import { CredentialError } from '../../../src/kube/exec-credential.ts';
import { ApiError } from '../../../src/kube/errors.ts';
import { json, plainConnection, startFakeApiServer } from '../../support/fake-apiserver.ts';

const NODE = { metadata: { name: 'node-1', uid: 'u' } };

async function values(registry: ReturnType<typeof createRegistry>, name: string) {
  return ((await registry.getSingleMetric(name)?.get())?.values ?? []).map((v) => [v.labels, v.value]);
}

/** The series that counted something; every reason also has its series at 0 from the start. */
async function counted(registry: ReturnType<typeof createRegistry>, name: string) {
  return (await values(registry, name)).filter(([, v]) => v !== 0);
}

describe('KubeClient credentials inside the request deadline', () => {
  it('fails a request whose credentials never come, at its deadline, counted', async () => {
    const srv = await startFakeApiServer((_req, res) => json(res, 200, NODE));
    const clock = new FakeClock();
    const registry = createRegistry();
    const budgets: (number | undefined)[] = [];
    const connection = {
      ...plainConnection(srv.url),
      authHeaders: (budgetMs?: number) => {
        budgets.push(budgetMs);
        return new Promise<Record<string, string>>(() => {});
      },
    };
    const c = new KubeClient({ connection, version: 'v1', registry, clock, timeoutMs: 2500 });
    const out: { err?: unknown } = {};
    const pending = c.getNode('node-1').catch((err: unknown) => {
      out.err = err;
    });
    await new Promise((r) => setImmediate(r));
    assert.deepEqual(budgets, [2500], 'the source is told the whole deadline');
    clock.advance(2499);
    await new Promise((r) => setImmediate(r));
    assert.equal(out.err, undefined, 'still waiting before the deadline');
    clock.advance(1);
    await pending;
    const err: unknown = out.err;
    assert.ok(err instanceof ApiError, String(err));
    assert.match(err.message, /credentials: timed out after 2500ms/);
    assert.deepEqual(await counted(registry, 'npd_apiserver_credential_failures_total'), [
      [{ reason: 'timeout' }, 1],
    ]);
    assert.equal((await values(registry, 'npd_apiserver_credential_failures_total')).length, 6);
    assert.deepEqual(await values(registry, 'npd_apiserver_requests_total'), [
      [{ verb: 'GET', resource: 'nodes', code: 'error' }, 1],
    ]);
    c.close();
    await srv.close();
  });

  it('counts a credential failure by its reason, and leaves the request the rest of the deadline', async () => {
    const srv = await startFakeApiServer((_req, res) => json(res, 200, NODE));
    const registry = createRegistry();
    let calls = 0;
    const connection = {
      ...plainConnection(srv.url),
      authHeaders: async () => {
        calls += 1;
        if (calls === 1) throw new CredentialError('output_too_large', 'plugin printed too much');
        return { authorization: 'Bearer t' };
      },
    };
    const c = new KubeClient({ connection, version: 'v1', registry, timeoutMs: 5000 });
    await assert.rejects(c.getNode('node-1'), /plugin printed too much/);
    assert.equal((await c.getNode('node-1')).uid, 'u');
    assert.deepEqual(await counted(registry, 'npd_apiserver_credential_failures_total'), [
      [{ reason: 'output_too_large' }, 1],
    ]);
    c.close();
    await srv.close();
  });
});
