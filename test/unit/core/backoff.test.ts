import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { backoffMs, RetrySleeper } from '../../../src/core/backoff.ts';
import { FakeClock } from '../../../src/core/clock.ts';

describe('backoff', () => {
  it('doubles from the initial delay and stays at the cap, however many failures', () => {
    assert.deepEqual(
      [1, 2, 3, 4, 5, 6].map((n) => backoffMs(n, 1000, 30_000)),
      [1000, 2000, 4000, 8000, 16_000, 30_000],
    );
    assert.equal(backoffMs(5000, 1000, 30_000), 30_000);
  });

  it('wakes every sleeper with false on stop, and refuses sleeps after it', async () => {
    const clock = new FakeClock();
    const sleeper = new RetrySleeper(clock);
    const done = sleeper.sleep(100);
    clock.advance(100);
    assert.equal(await done, true);
    const a = sleeper.sleep(1000);
    const b = sleeper.sleep(5000);
    sleeper.stop();
    assert.deepEqual(await Promise.all([a, b]), [false, false]);
    assert.equal(clock.pendingTimers(), 0);
    assert.equal(await sleeper.sleep(10), false);
  });
});
