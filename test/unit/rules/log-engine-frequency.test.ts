/**
 * LogRuleEngine frequency rules (count/window), which replace NPD's log-counter plugin; the rest of
 * the engine is tested in log-engine.test.ts.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { LogRuleConfig } from '../../../src/rules/config.ts';
import { engine, line, T0 } from './log-engine-helpers.ts';

describe('LogRuleEngine frequency rules (count/window, like NPD log-counter)', () => {
  const FREQ: LogRuleConfig = {
    type: 'permanent',
    condition: 'KernelDeadlock',
    reason: 'FrequentHung',
    pattern: 'hung \\d+',
    count: 3,
    windowMs: 60_000,
    revertPattern: 'unhung',
  };

  it('raises a permanent condition at the count-th match within the window, dated by that match', () => {
    const e = engine([FREQ]);
    assert.equal(e.process(line('hung 1', T0)), undefined);
    assert.equal(e.process(line('hung 2', T0 + 10_000)), undefined);
    const r = e.process(line('hung 3', T0 + 20_000));
    assert.equal(r?.status.conditions[0]?.status, 'True');
    assert.equal(r?.status.conditions[0]?.transition, T0 + 20_000);
    assert.equal(r?.status.conditions[0]?.message, 'hung 3');
  });

  it('does not count matches that fell out of the window', () => {
    const e = engine([FREQ]);
    e.process(line('hung 1', T0));
    e.process(line('hung 2', T0 + 30_000));
    assert.equal(e.process(line('hung 3', T0 + 60_000)), undefined); // the first is exactly a window old
    assert.ok(e.process(line('hung 4', T0 + 61_000)));
  });

  it('lets a revertPattern match cancel a counted match', () => {
    const e = engine([FREQ]);
    e.process(line('hung 1', T0));
    e.process(line('hung 2', T0 + 1));
    assert.equal(e.process(line('unhung', T0 + 2)), undefined);
    assert.equal(e.process(line('hung 3', T0 + 3)), undefined);
    assert.ok(e.process(line('hung 4', T0 + 4)));
  });

  it('clears the permanent condition on tick() once the window holds fewer than count matches', () => {
    const e = engine([FREQ]);
    for (let i = 0; i < 3; i++) e.process(line(`hung ${i}`, T0 + i * 1000));
    assert.equal(e.tick(T0 + 60_000 - 1), undefined);
    const r = e.tick(T0 + 60_000);
    assert.equal(r?.status.conditions[0]?.status, 'False');
    assert.deepEqual(r?.gauges, [{ type: 'KernelDeadlock', reason: 'FrequentHung', active: false }]);
  });

  it('reports a temporary frequency rule once per burst, then counts afresh', () => {
    const e = engine([
      { type: 'temporary', reason: 'Flapping', pattern: 'link down', count: 2, windowMs: 60_000 },
    ]);
    assert.equal(e.process(line('eth0 link down', T0)), undefined);
    const r = e.process(line('eth1 link down', T0 + 1));
    assert.deepEqual(
      r?.status.events.map((ev) => [ev.reason, ev.message, ev.timestamp]),
      [['Flapping', 'eth1 link down', T0 + 1]],
    );
    assert.equal(e.process(line('eth0 link down', T0 + 2)), undefined);
    assert.ok(e.process(line('eth0 link down', T0 + 3)));
  });
});
