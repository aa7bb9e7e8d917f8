import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { ApiError } from '../../../src/kube/errors.ts';
import { cond, KEY, NOT_READY, setup } from './harness.ts';

describe('TaintController failures', () => {
  it('counts API errors and retries with exponential backoff, never throwing', async () => {
    const { api, controller, advance, failed, added } = setup();
    const forbidden = () => new ApiError('PATCH /api/v1/nodes/n1: 403 Forbidden', 403, 'Forbidden');
    api.failures.push(undefined, forbidden(), undefined, forbidden(), undefined, forbidden());
    controller.observe(cond('True'));
    await advance();
    assert.equal(await failed(), 1);
    await advance(999);
    assert.equal(api.calls.length, 2, 'no retry before the 1 s backoff');
    await advance(1);
    assert.equal(await failed(), 2);
    await advance(1_999);
    assert.equal(api.calls.length, 4, 'the second backoff is 2 s');
    await advance(1);
    assert.equal(await failed(), 3);
    await advance(4_000);
    assert.equal(await failed(), 3);
    assert.equal(await added(), 1);
    assert.deepEqual(
      api.taints.map((t) => t.key),
      [NOT_READY.key, KEY],
    );
    controller.stop();
  });

  it('counts a failed read (transport error, missing Node) the same way', async () => {
    const { api, controller, advance, failed } = setup();
    api.failures.push(
      new ApiError('GET: socket hang up'),
      new ApiError('GET: 404 NotFound', 404, 'NotFound'),
    );
    controller.observe(cond('True'));
    await advance();
    await advance(1_000);
    assert.equal(await failed(), 2);
    await advance(2_000);
    assert.ok(api.taints.some((t) => t.key === KEY));
    controller.stop();
  });

  it('caps the backoff at the resync period and honours a longer Retry-After', async () => {
    const { api, controller, advance, failed } = setup({ extra: { resyncPeriodMs: 4_000 } });
    for (let i = 0; i < 5; i++) api.failures.push(new ApiError('GET: 500', 500));
    api.failures.push(new ApiError('GET: 429', 429, 'TooManyRequests', 30_000));
    controller.observe(cond('True'));
    await advance();
    for (const wait of [1_000, 2_000, 4_000, 4_000, 4_000]) await advance(wait);
    assert.equal(await failed(), 6);
    await advance(29_999);
    assert.equal(api.calls.length, 6, 'Retry-After holds the next attempt');
    await advance(1);
    assert.ok(api.taints.some((t) => t.key === KEY));
    controller.stop();
  });

  it('keeps to its backoff when the condition flaps during it', async () => {
    const { api, controller, advance } = setup();
    api.failures.push(new ApiError('GET: 503', 503));
    controller.observe(cond('True'));
    await advance();
    controller.observe(cond('False'));
    controller.observe(cond('True'));
    await advance(500);
    assert.equal(api.calls.length, 1);
    await advance(500);
    assert.ok(api.taints.some((t) => t.key === KEY));
    controller.stop();
  });

  it('runs one reconcile at a time and folds changes made meanwhile into one more run', async () => {
    const { api, controller, advance, added, removed } = setup();
    let release = () => {};
    api.gate = new Promise<void>((resolve) => {
      release = resolve;
    });
    controller.observe(cond('True'));
    await advance();
    controller.observe(cond('False'));
    controller.observe(cond('True'));
    controller.observe(cond('False'));
    await advance(5_000);
    assert.equal(api.calls.length, 1, 'the first read is still in flight');
    api.gate = undefined;
    release();
    await advance();
    assert.equal(api.maxInFlight, 1);
    assert.deepEqual(api.taints, [NOT_READY]);
    assert.equal(await added(), 0);
    assert.equal(await removed(), 0);
    assert.deepEqual(
      api.calls.map((c) => c.method),
      ['GET', 'GET'],
    );
    controller.stop();
  });

  it('schedules nothing after stop()', async () => {
    const { api, clock, controller, advance } = setup();
    controller.observe(cond('True'));
    await advance();
    controller.stop();
    controller.observe(cond('False'));
    await advance(10 * 60_000);
    assert.equal(api.patches().length, 1);
    assert.equal(clock.pendingTimers(), 0);
  });
});
