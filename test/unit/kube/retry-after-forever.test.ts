/**
 * A server that answers every request with 429 and Retry-After: 5 (an APF priority level with no seats
 * left), forever: each kind of write the agent makes tries at most once per 5 s and counts what it
 * gives up. The condition PATCH is the same test in test/unit/conditions/manager-jitter.test.ts.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { FakeClock } from '../../../src/core/clock.ts';
import { createRegistry } from '../../../src/core/metrics.ts';
import { ApiError } from '../../../src/kube/errors.ts';
import { NodeInfo } from '../../../src/kube/node-info.ts';
import { drain, kubeEvent } from '../events/record/helpers.ts';
import { setup } from '../events/record/sink-fixture.ts';

const throttled = () => new ApiError('429 TooManyRequests', 429, 'TooManyRequests', 5000);
const TEN_MIN = 600_000;

function gaps(times: readonly number[]): number[] {
  return times.slice(1).map((t, i) => t - (times[i] ?? 0));
}

describe('429 with Retry-After: 5 forever', () => {
  it('GET node: at most one request per 5 s, backing off to 30-60 s', async () => {
    const clock = new FakeClock(0);
    const calls: number[] = [];
    const client = {
      async getNode(): Promise<never> {
        calls.push(clock.now());
        throw throttled();
      },
    };
    const info = new NodeInfo({
      client,
      nodeName: 'n',
      clock,
      registry: createRegistry(),
      random: () => 0.5,
    });
    info.start();
    for (let s = 0; s < TEN_MIN / 1000; s++) {
      clock.advance(1000);
      await drain(3);
    }
    info.stop();
    assert.ok(
      gaps(calls).every((g) => g >= 5000),
      `gaps ${gaps(calls)}`,
    );
    assert.ok(calls.length <= 25, `${calls.length} GETs in 10 min`);
  });

  it('event writes: at most one per 5 s per source, every event given up is counted', async () => {
    const times: number[] = [];
    const t = setup(() => {
      times.push(t.clock.now());
      return throttled();
    });
    for (let i = 0; i < 5; i++) t.broadcaster.actionOrDrop(kubeEvent({ name: `e${i}`, reason: `R${i}` }));
    await drain();
    for (let s = 0; s < TEN_MIN / 1000; s++) await t.advance(1000);
    assert.ok(
      gaps(times).every((g) => g >= 5000),
      `gaps ${gaps(times)}`,
    );
    assert.ok(times.length <= TEN_MIN / 5000, `${times.length} writes in 10 min`);
    const givenUp = await t.metric('given_up_total', { reason: 'retries_exhausted' });
    assert.equal(givenUp, Math.floor(times.length / 12), '12 tries per event, then counted as given up');
    assert.ok((givenUp ?? 0) >= 4, 'the queue moved on: one event does not block the rest forever');
  });
});
