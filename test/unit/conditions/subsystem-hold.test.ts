import assert from 'node:assert/strict';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { SubsystemHealth } from '../../../src/conditions/subsystem.ts';
import { SubsystemReporter } from '../../../src/conditions/subsystem-reporter.ts';
import { SubsystemTable } from '../../../src/conditions/subsystem-table.ts';
import { loadConfigs } from '../../../src/config/load.ts';
import { FakeClock } from '../../../src/core/clock.ts';
import type { Condition, Status } from '../../../src/core/types.ts';
import { systemLogConfigKind } from '../../../src/monitors/system-log/schema.ts';

const ROOT = join(import.meta.dirname, '../../..');
const WINDOW = 10 * 60_000;
const HOLD = 2 * 60_000;
const T0 = Date.UTC(2026, 0, 1);
const GPU = { name: 'gpu.yaml monitor' };

const table = SubsystemTable.from(
  loadConfigs([{ file: join(ROOT, 'rules/gpu.yaml') }], [systemLogConfigKind]),
);

function health(holdMs: number): SubsystemHealth {
  return new SubsystemHealth({ table, windowMs: WINDOW, holdMs, nodeName: 'n1' });
}

function xid79(timestamp: number): Status {
  const message = 'NVRM: Xid (PCI:0000:3b:00): 79, GPU has fallen off the bus.';
  return {
    source: 'gpu-monitor',
    conditions: [],
    events: [{ severity: 'warn', reason: 'NVRMXid79', message, timestamp }],
  };
}

function gpu(status: 'True' | 'False', transition: number): Status {
  const reason = status === 'True' ? 'GPUFallenOffBus' : 'GPUIsHealthy';
  const c: Condition = { type: 'GPUUnhealthy', status, reason, message: 'm', transition };
  return { source: 'gpu-monitor', events: [], conditions: [c] };
}

function ready(list: readonly Condition[]): Condition {
  const c = list.find((x) => x.type === 'AcceleratedHardwareReady');
  assert.ok(c);
  return c;
}

describe('subsystem windows count from when the agent saw the event', () => {
  it('lets a line stamped years ahead hold its subsystem for one window only', () => {
    const h = health(0);
    h.observe(xid79(Date.UTC(2035, 0, 1)), GPU, T0);
    assert.equal(ready(h.evaluate(T0)).status, 'False');
    assert.equal(h.nextExpiry(), T0 + WINDOW);
    assert.equal(ready(h.evaluate(T0 + WINDOW - 1)).status, 'False');
    assert.equal(ready(h.evaluate(T0 + WINDOW)).status, 'True');
  });

  it('keeps the own age of a line read back from the past (lookback)', () => {
    const h = health(0);
    h.observe(xid79(T0 - 5 * 60_000), GPU, T0);
    assert.equal(ready(h.evaluate(T0)).status, 'False');
    assert.equal(h.nextExpiry(), T0 + 5 * 60_000);
  });
});

describe('minimum hold of a False subsystem condition (--subsystem-hold)', () => {
  /** A problem condition flapping at 1 Hz for a minute, evaluated after every status. */
  function flap(h: SubsystemHealth): Condition[] {
    const seen: Condition[] = [];
    for (let s = 0; s < 60; s++) {
      const now = T0 + s * 1000;
      h.observe(gpu(s % 2 === 0 ? 'True' : 'False', now), GPU, now);
      seen.push(ready(h.evaluate(now)));
    }
    return seen;
  }

  it('stays False with one lastTransitionTime while the input flaps, then recovers after the hold', () => {
    const h = health(HOLD);
    const seen = flap(h);
    assert.deepEqual(new Set(seen.map((c) => c.status)), new Set(['False']));
    assert.deepEqual(new Set(seen.map((c) => c.transition)), new Set([T0]));
    // The last clear came at 59 s: the hold counts from there, not from the first clear at 1 s.
    const quiet = T0 + 59_000;
    assert.equal(h.nextExpiry(), quiet + HOLD);
    assert.equal(ready(h.evaluate(quiet + HOLD - 1)).status, 'False');
    const healthy = ready(h.evaluate(quiet + HOLD));
    assert.equal(healthy.status, 'True');
    assert.equal(healthy.transition, quiet + HOLD);
  });

  it('flips at the input rate without a hold (the negative control)', () => {
    const seen = flap(health(0));
    const flips = seen.filter((c, i) => i > 0 && c.status !== seen[i - 1]?.status).length;
    assert.equal(flips, 59);
  });

  it('turns False at once: the hold delays only the recovery', () => {
    const h = health(HOLD);
    assert.equal(ready(h.evaluate(T0)).status, 'True');
    h.observe(gpu('True', T0 + 1), GPU, T0 + 1);
    assert.equal(ready(h.evaluate(T0 + 1)).status, 'False');
  });

  it('is re-evaluated by the reporter when the hold ends', () => {
    const clock = new FakeClock(T0);
    const published: Condition[] = [];
    const r = new SubsystemReporter({
      health: health(HOLD),
      clock,
      publish: (c) => published.push(ready(c)),
    });
    r.start();
    r.observe(gpu('True', clock.now()), GPU);
    clock.advance(1000);
    r.observe(gpu('False', clock.now()), GPU);
    clock.advance(1000);
    assert.equal(published.at(-1)?.status, 'False');
    clock.advance(HOLD - 1000);
    assert.equal(published.at(-1)?.status, 'False');
    clock.advance(1000);
    assert.equal(published.at(-1)?.status, 'True');
    r.stop();
  });
});

describe('SubsystemHealth.forget', () => {
  it('drops the conditions of a monitor a reload removed, and only its own', () => {
    const h = health(0);
    const other = { name: 'second gpu-monitor file' };
    h.observe(gpu('True', T0), GPU, T0);
    h.observe(gpu('False', T0), other, T0);
    assert.equal(ready(h.evaluate(T0)).status, 'False', 'the second file does not clear the first');
    h.forget(other);
    assert.equal(ready(h.evaluate(T0 + 1)).status, 'False');
    h.forget(GPU);
    assert.equal(ready(h.evaluate(T0 + 2)).status, 'True');
  });
});
