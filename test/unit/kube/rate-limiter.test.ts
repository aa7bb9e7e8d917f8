import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { FakeClock } from '../../../src/core/clock.ts';
import { createRegistry } from '../../../src/core/metrics.ts';
import { KubeClient } from '../../../src/kube/client.ts';
import { RateLimiter } from '../../../src/kube/rate-limiter.ts';
import { json, plainConnection, startFakeApiServer } from '../../support/fake-apiserver.ts';

const settle = () => new Promise((r) => setImmediate(r));

describe('RateLimiter (client-go token bucket)', () => {
  it('lets a burst through at once, then one request per 1/qps, in arrival order', () => {
    const clock = new FakeClock(0);
    const limiter = new RateLimiter(2, 3, clock);
    const waits = Array.from({ length: 6 }, () => limiter.reserve());
    assert.deepEqual(waits, [0, 0, 0, 500, 1000, 1500]);
  });

  it('refills at qps up to burst while idle', () => {
    const clock = new FakeClock(0);
    const limiter = new RateLimiter(10, 5, clock);
    for (let i = 0; i < 5; i++) limiter.reserve();
    clock.advance(60_000);
    const waits = Array.from({ length: 6 }, () => limiter.reserve());
    assert.deepEqual(waits, [0, 0, 0, 0, 0, 100], 'a minute idle refills only up to the burst of 5');
  });

  it('ignores the wall clock stepping back or forward (it runs on monotonic time)', () => {
    const clock = new FakeClock(60_000);
    const limiter = new RateLimiter(5, 10, clock);
    for (let i = 0; i < 10; i++) limiter.reserve();
    clock.set(0);
    assert.equal(limiter.reserve(), 200, 'a step back takes no tokens away');
    const wall = {
      now: () => 10 ** 13,
      hrtime: () => clock.hrtime(),
      setTimeout: clock.setTimeout.bind(clock),
    };
    const onWall = new RateLimiter(1, 1, wall);
    onWall.reserve();
    assert.equal(onWall.reserve(), 1000, 'a jump of the wall clock mints no tokens');
  });

  it("uses client-go's defaults for 0 and no limit for a negative QPS", () => {
    const clock = new FakeClock(0);
    const defaults = new RateLimiter(0, 0, clock);
    const waits = Array.from({ length: 11 }, () => defaults.reserve());
    assert.deepEqual(waits.slice(9), [0, 200], 'burst 10, then 5 QPS');
    const none = new RateLimiter(-1, 1, clock);
    assert.deepEqual(
      Array.from({ length: 1000 }, () => none.reserve()).filter((w) => w > 0),
      [],
    );
  });

  it('wait() resolves only when the fake clock reaches the slot', async () => {
    const clock = new FakeClock(0);
    const limiter = new RateLimiter(1, 1, clock);
    assert.equal(await limiter.wait(), 0);
    let done = false;
    const second = limiter.wait().then((ms) => {
      done = true;
      return ms;
    });
    clock.advance(999);
    await settle();
    assert.equal(done, false);
    clock.advance(1);
    assert.equal(await second, 1000);
  });
});

describe('KubeClient with --kube-api-qps/--kube-api-burst', () => {
  it('holds requests over the burst back and counts the time they waited', async () => {
    const server = await startFakeApiServer((_req, res) => json(res, 201, { kind: 'Event' }));
    const clock = new FakeClock(0);
    const registry = createRegistry();
    const client = new KubeClient({
      connection: plainConnection(server.url),
      version: 't',
      registry,
      clock,
      qps: 1,
      burst: 2,
    });
    try {
      const sent = [1, 2, 3].map((i) => client.createEvent('default', { metadata: { name: `e${i}` } }));
      await Promise.all(sent.slice(0, 2));
      await settle();
      assert.equal(server.requests.length, 2, 'the third request waits for its token');
      clock.advance(1000);
      await sent[2];
      assert.equal(server.requests.length, 3);
      const metric = await registry.getSingleMetric('npd_apiserver_throttled_seconds_total')?.get();
      assert.equal(metric?.values[0]?.value, 1);
    } finally {
      client.close();
      await server.close();
    }
  });
});
