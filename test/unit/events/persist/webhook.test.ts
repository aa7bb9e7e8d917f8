import assert from 'node:assert/strict';
import { afterEach, describe, it } from 'node:test';
import { WebhookSink, type WebhookSinkOptions } from '../../../../src/events/persist/webhook.ts';
import { drain, kubeEvent, overflowThenShutdown, type Reply, sinkHarness, until } from './helpers.ts';

const SECRET = 'Bearer s3cr3t-token';
let closeAll: (() => Promise<void>) | undefined;

afterEach(async () => {
  await closeAll?.();
  closeAll = undefined;
});

async function setup(reply: Reply, extra: Partial<WebhookSinkOptions> = {}) {
  const t = await sinkHarness(
    reply,
    (deps) =>
      new WebhookSink({
        ...deps,
        headers: { Authorization: SECRET, 'X-Cluster': 'prod' },
        nodeName: 'node-1',
        ...extra,
      }),
  );
  closeAll = t.closeAll;
  return t;
}

const ok: Reply = () => ({ status: 200 });

describe('WebhookSink', () => {
  it('POSTs the core/v1 event JSON with the configured headers, never logging their values', async () => {
    const t = await setup(ok);
    await t.sink.write(kubeEvent({ count: 1 }));
    assert.equal(t.srv.requests.length, 1);
    const req = t.srv.requests[0]!;
    assert.equal(req.method, 'POST');
    assert.equal(req.url, '/hook?token=secret-query');
    assert.equal(req.headers.authorization, SECRET);
    assert.equal(req.headers['x-cluster'], 'prod');
    assert.equal(req.headers['content-type'], 'application/json');
    const body = JSON.parse(req.body);
    assert.equal(body.kind, 'Event');
    assert.equal(body.apiVersion, 'v1');
    assert.deepEqual(body.involvedObject, { kind: 'Node', name: 'node-1', uid: 'uid-1', apiVersion: 'v1' });
    assert.equal(body.reason, 'OOMKilling');
    assert.equal(body.message, 'Killed process 1234 (foo)');
    assert.equal(body.type, 'Warning');
    assert.equal(body.count, 1);
    assert.deepEqual(body.source, { component: 'kernel-monitor', host: 'node-1' });
    assert.equal(body.firstTimestamp, '2026-01-01T00:00:00Z');
    assert.equal(body.lastTimestamp, '2026-01-01T00:00:00Z');
    assert.equal(body.eventTime, '2026-01-01T00:00:00.000000Z');
    assert.equal(body.nodeName, 'node-1');
    assert.equal(await t.metric('writes', { result: 'success' }), 1);
    assert.equal(JSON.stringify(t.records).includes('s3cr3t'), false);
  });

  it('gives up (counted) an event it cannot encode, never throwing at the watcher', async () => {
    const t = await setup(ok);
    // JSON.stringify throws on a BigInt: stands for any event the format cannot encode.
    await t.sink.write(kubeEvent({ count: 1n as unknown as number }));
    assert.equal(t.srv.requests.length, 0);
    assert.equal(await t.metric('given_up'), 1);
    await t.sink.write(kubeEvent({ count: 2 }));
    assert.equal(await t.metric('writes', { result: 'success' }), 1);
  });

  it('retries a 500 after a jittered backoff, then succeeds', async () => {
    const t = await setup((_req, i) => ({ status: i === 0 ? 500 : 204 }));
    const done = t.sink.write(kubeEvent());
    await until(async () => (await t.metric('writes', { result: 'failure' })) === 1, 'first failure');
    await drain();
    t.clock.advance(499); // first step is 1s; random() = 0 takes its lower half
    await drain();
    assert.equal(t.srv.requests.length, 1);
    t.clock.advance(1);
    await done;
    assert.equal(t.srv.requests.length, 2);
    assert.equal(await t.metric('retries'), 1);
    assert.equal(await t.metric('writes', { result: 'success' }), 1);
    assert.equal(await t.metric('given_up'), 0);
    const warned = t.records.filter((r) => r.level === 40);
    assert.equal(warned.length, 1, 'the outage is logged once');
    assert.equal(warned[0]?.url, `${new URL(t.srv.url).origin}/hook`, 'no query string in logs');
    assert.ok(t.records.some((r) => r.msg === 'event sink recovered'));
  });

  it('honours Retry-After on 429', async () => {
    const t = await setup((_req, i) =>
      i === 0 ? { status: 429, headers: { 'Retry-After': '7' } } : { status: 200 },
    );
    const done = t.sink.write(kubeEvent());
    await until(async () => (await t.metric('writes', { result: 'failure' })) === 1, '429');
    await drain();
    t.clock.advance(6999);
    await drain();
    assert.equal(t.srv.requests.length, 1);
    t.clock.advance(1);
    await done;
    assert.equal(t.srv.requests.length, 2);
    assert.equal(await t.metric('writes', { result: 'success' }), 1);
  });

  it('times a request out on the injected clock and counts the failure', async () => {
    const t = await setup(() => undefined, { timeoutMs: 5000, maxTries: 1 });
    const done = t.sink.write(kubeEvent());
    await until(() => t.srv.requests.length === 1, 'request');
    t.clock.advance(5000);
    await done;
    assert.equal(await t.metric('writes', { result: 'failure' }), 1);
    assert.equal(await t.metric('given_up'), 1);
    assert.ok(t.records.some((r) => /timed out/.test(String(r.err))));
  });

  it('gives up after maxTries, counting each retry', async () => {
    const t = await setup(() => ({ status: 503 }), { maxTries: 3 });
    let finished = false;
    const done = t.sink.write(kubeEvent()).then(() => {
      finished = true;
    });
    for (let n = 1; !finished; n++) {
      await until(
        async () => finished || (await t.metric('writes', { result: 'failure' })) === n,
        `attempt ${n}`,
      );
      await drain();
      t.clock.advance(30_000);
    }
    await done;
    assert.equal(t.srv.requests.length, 3);
    assert.equal(await t.metric('retries'), 2);
    assert.equal(await t.metric('given_up'), 1);
  });

  it('gives up at once on a 4xx other than 408 and 429', async () => {
    const t = await setup(() => ({ status: 400 }));
    await t.sink.write(kubeEvent());
    assert.equal(t.srv.requests.length, 1);
    assert.equal(await t.metric('writes', { result: 'rejected' }), 1);
    assert.equal(await t.metric('given_up'), 1);
    assert.equal(await t.metric('retries'), 0);
  });

  it('grows the backoff exponentially up to the cap', async () => {
    const t = await setup(ok, { baseDelayMs: 1000, maxDelayMs: 5000, random: () => 1 });
    assert.deepEqual(
      [1, 2, 3, 4, 5].map((n) => t.sink.delayAfter(n, undefined)),
      [1000, 2000, 4000, 5000, 5000],
    );
    assert.equal(t.sink.delayAfter(1, 600_000), 60_000, 'Retry-After is capped');
  });
});

describe('WebhookSink behind a persist watcher', () => {
  it('drops and counts events beyond its queue, and drops what is left when the grace period ends', async () => {
    const t = await setup(() => undefined, { timeoutMs: 60_000 });
    const drops = await overflowThenShutdown(t, 2, 5);
    assert.deepEqual(drops, { atQueue: 2, atFlush: 2 }, 'one in flight, two queued, two dropped');
    t.srv.release(200);
    await until(async () => (await t.metric('writes', { result: 'success' })) === 1, 'in-flight write');
  });
});
