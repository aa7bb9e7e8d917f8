import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { ConditionManager, type NodeConditionJson } from '../../../src/conditions/manager.ts';
import { FakeClock } from '../../../src/core/clock.ts';
import { createRegistry } from '../../../src/core/metrics.ts';

const flush = () => new Promise((r) => setImmediate(r));

describe('ConditionManager.requestSync', () => {
  it('sends an annotation-only change at most once per interval, however often it is asked', async () => {
    const clock = new FakeClock();
    const patches: number[] = [];
    const writer = {
      async patchConditions(_c: readonly NodeConditionJson[]) {
        patches.push(clock.now());
      },
    };
    const m = new ConditionManager({ writer, clock, registry: createRegistry(), heartbeatPeriodMs: 300_000 });
    m.update({ type: 'A', status: 'False', transition: clock.now(), reason: 'R', message: 'm' });
    m.start();
    clock.advance(1000);
    await flush();
    assert.equal(patches.length, 1, 'the first sync');
    for (let s = 0; s < 120; s++) {
      m.requestSync(60_000);
      clock.advance(1000);
      await flush();
    }
    assert.equal(patches.length, 3, 'one more at 61 s, one more at 121 s');
    assert.deepEqual(
      patches.map((t) => t - patches[0]!),
      [0, 60_000, 120_000],
    );
    m.stop();
  });
});
