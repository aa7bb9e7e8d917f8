import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { type BackoffPolicy, jitterDown, jitterUp, retryDelayMs } from '../../../src/kube/backoff.ts';

const policy: BackoffPolicy = { initialMs: 1000, maxMs: 30_000, jitter: 1, maxRetryAfterMs: 60_000 };
const at = (r: number) => () => r;

describe('retryDelayMs', () => {
  it('doubles from the initial wait up to the cap, with no jitter at random 0', () => {
    const waits = [1, 2, 3, 4, 5, 6, 7, 40].map((n) => retryDelayMs(n, policy, at(0)));
    assert.deepEqual(waits, [1000, 2000, 4000, 8000, 16_000, 30_000, 30_000, 30_000]);
  });

  it('stretches each wait by up to the jitter factor, never shortens it', () => {
    assert.equal(retryDelayMs(3, policy, at(0.5)), 6000);
    assert.equal(retryDelayMs(3, policy, at(0.999)), 4000 + 4000 * 0.999);
    assert.equal(retryDelayMs(3, { ...policy, jitter: 0.5 }, at(0.5)), 5000);
  });

  it('holds the first flatFailures waits at the initial one', () => {
    const flat = { ...policy, initialMs: 10_000, maxMs: 40_000, flatFailures: 2 };
    const waits = [1, 2, 3, 4, 5].map((n) => retryDelayMs(n, flat, at(0)));
    assert.deepEqual(waits, [10_000, 10_000, 20_000, 40_000, 40_000]);
  });

  it("never waits less than the server's Retry-After, which is capped and jittered like the backoff", () => {
    assert.equal(retryDelayMs(1, policy, at(0), 5000), 5000, 'longer than the backoff: honoured');
    assert.equal(retryDelayMs(1, policy, at(0.5), 5000), 7500, 'and jittered: every agent heard 5 s');
    assert.equal(retryDelayMs(6, policy, at(0), 5000), 30_000, 'shorter than the backoff: the backoff');
    assert.equal(retryDelayMs(1, policy, at(0), 3_600_000), 60_000, 'an hour is capped at the maximum');
  });
});

describe('jitterUp and jitterDown', () => {
  it('move a period only one way each', () => {
    for (const r of [0, 0.25, 0.999]) {
      assert.ok(jitterUp(300_000, 0.04, at(r)) >= 300_000);
      assert.ok(jitterUp(300_000, 0.04, at(r)) < 312_000);
      assert.ok(jitterDown(300_000, 0.5, at(r)) <= 300_000);
      assert.ok(jitterDown(300_000, 0.5, at(r)) > 150_000);
    }
    assert.equal(jitterDown(300_000, 0.5, at(0.5)), 225_000);
  });
});
