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
    const m = new ConditionManager({
      writer,
      clock,
      registry: createRegistry(),
      heartbeatPeriodMs: 300_000,
      random: () => 0, // no jitter: the first sync on the first tick, heartbeats on the period
    });
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

describe('ConditionManager.flush (shutdown)', () => {
  function started() {
    const clock = new FakeClock();
    const patches: { at: number; annotations: unknown }[] = [];
    let watermark = 1;
    const writer = {
      async patchConditions(_c: readonly NodeConditionJson[], extras?: { annotations?: unknown }) {
        patches.push({ at: clock.now(), annotations: extras?.annotations });
      },
    };
    const m = new ConditionManager({
      writer,
      clock,
      registry: createRegistry(),
      random: () => 0,
      extras: () => ({ deleteTypes: [], annotations: { watermark: String(watermark) } }),
    });
    m.update({ type: 'A', status: 'False', transition: clock.now(), reason: 'R', message: 'm' });
    m.start();
    return { clock, m, patches, moveWatermark: (w: number) => (watermark = w) };
  }

  it('sends the watermark a throttled requestSync still owes, once, and stops the loop', async () => {
    const { clock, m, patches, moveWatermark } = started();
    clock.advance(1000);
    await flush();
    assert.equal(patches.length, 1);
    moveWatermark(2);
    m.requestSync(60_000);
    await m.flush();
    assert.equal(patches.length, 2, 'the owed sync went out at once, not 60 s later');
    assert.deepEqual(patches[1]?.annotations, { watermark: '2' });
    clock.advance(120_000);
    await flush();
    assert.equal(patches.length, 2, 'no tick after flush');
  });

  it('sends a condition reported after the last sync; sends nothing when nothing is owed', async () => {
    const { clock, m, patches } = started();
    clock.advance(1000);
    await flush();
    m.update({ type: 'B', status: 'True', transition: clock.now(), reason: 'R', message: 'late' });
    await m.flush();
    assert.equal(patches.length, 2);
    const idle = started();
    idle.clock.advance(1000);
    await flush();
    await idle.m.flush();
    assert.equal(idle.patches.length, 1, 'nothing owed: no extra patch at shutdown');
  });
});
