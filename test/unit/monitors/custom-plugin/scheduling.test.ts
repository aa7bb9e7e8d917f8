import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { Clock } from '../../../../src/core/clock.ts';
import { PluginScheduler, Semaphore } from '../../../../src/monitors/custom-plugin/scheduler.ts';
import { advance, monitorHarness, outcome, pluginConfig, settle, T0 } from './helpers.ts';

const rule = (path: string, extra: Record<string, unknown> = {}) => ({
  type: 'temporary',
  reason: path,
  path,
  ...extra,
});

describe('custom plugin scheduling', () => {
  it('runs every rule at start, then each interval group on its own ticker', async () => {
    const config = pluginConfig({
      pluginConfig: { invoke_interval: '30s' },
      rules: [rule('/a'), rule('/b'), rule('/c', { invoke_interval: '10s' })],
    });
    const h = monitorHarness(config, () => {});
    await h.monitor.start((s) => h.statuses.push(s));
    await advance(h.clock, 65_000, 1000);
    assert.deepEqual(h.executor.startsOf('/a'), [0, 30_000, 60_000]);
    assert.deepEqual(h.executor.startsOf('/b'), [0, 30_000, 60_000]);
    assert.deepEqual(h.executor.startsOf('/c'), [0, 10_000, 20_000, 30_000, 40_000, 50_000, 60_000]);
    await h.monitor.stop();
  });

  it('never overlaps a group with itself and runs at most one catch-up batch', async () => {
    const config = pluginConfig({
      pluginConfig: { invoke_interval: '10s', timeout: '30s' },
      rules: [rule('/slow')],
    });
    const h = monitorHarness(config, (e) => e.script('/slow', [outcome('OK', 'fine')], 25_000));
    await h.monitor.start((s) => h.statuses.push(s));
    await advance(h.clock, 49_900);
    // Ticks at 10 s and 20 s both fell inside the first run: one catch-up when it ends at 25 s.
    assert.deepEqual(h.executor.startsOf('/slow'), [0, 25_000]);
    assert.equal(h.executor.maxInFlight, 1);
    await h.monitor.stop();
  });

  it('holds the number of running plugins to the concurrency limit, starting them in rule order', async () => {
    const config = pluginConfig({
      pluginConfig: { invoke_interval: '1h', concurrency: 2 },
      rules: ['/1', '/2', '/3', '/4', '/5'].map((p) => rule(p)),
    });
    const h = monitorHarness(config, (e) => {
      for (const p of ['/1', '/2', '/3', '/4', '/5']) e.script(p, [outcome('OK', p)], 1000);
    });
    await h.monitor.start((s) => h.statuses.push(s));
    await advance(h.clock, 5000);
    assert.equal(h.executor.maxInFlight, 2);
    assert.deepEqual(
      h.executor.calls.map((c) => [c.path, c.at - T0]),
      [
        ['/1', 0],
        ['/2', 0],
        ['/3', 1000],
        ['/4', 1000],
        ['/5', 2000],
      ],
    );
    await h.monitor.stop();
  });

  it('shares one semaphore across interval groups', async () => {
    const config = pluginConfig({
      pluginConfig: { invoke_interval: '5s', concurrency: 1 },
      rules: [rule('/a', { invoke_interval: '4s' }), rule('/b')],
    });
    const h = monitorHarness(config, (e) => {
      e.script('/a', [outcome('OK', 'a')], 3000);
      e.script('/b', [outcome('OK', 'b')], 3000);
    });
    await h.monitor.start((s) => h.statuses.push(s));
    await advance(h.clock, 30_000);
    assert.equal(h.executor.maxInFlight, 1);
    assert.ok(h.executor.startsOf('/a').length >= 4 && h.executor.startsOf('/b').length >= 4);
    await h.monitor.stop();
  });

  it('delays each tick by a fresh random fraction of the splay, never the initial batch', async () => {
    const draws = [0.5, 0.25, 0.75];
    const config = pluginConfig({
      pluginConfig: { invoke_interval: '10s', splay: '4s' },
      rules: [rule('/a')],
    });
    const h = monitorHarness(
      config,
      () => {},
      () => draws.shift() ?? 0,
    );
    await h.monitor.start((s) => h.statuses.push(s));
    await advance(h.clock, 35_000);
    // Grid points 10, 20, 30 s plus 2, 1 and 3 s: the grid does not drift with the jitter.
    assert.deepEqual(h.executor.startsOf('/a'), [0, 12_000, 21_000, 33_000]);
    await h.monitor.stop();
  });

  it('caps the splay at the group interval so ticks cannot reorder or bunch up', async () => {
    const config = pluginConfig({
      pluginConfig: { invoke_interval: '10s', splay: '1m' },
      rules: [rule('/a')],
    });
    const h = monitorHarness(
      config,
      () => {},
      () => 0.9,
    );
    await h.monitor.start((s) => h.statuses.push(s));
    await advance(h.clock, 40_000);
    assert.deepEqual(h.executor.startsOf('/a'), [0, 19_000, 29_000, 39_000]);
    await h.monitor.stop();
  });

  it('stops ticking and cancels its timers on stop, even mid-run', async () => {
    const config = pluginConfig({ pluginConfig: { invoke_interval: '10s' }, rules: [rule('/a')] });
    const h = monitorHarness(config, (e) => e.script('/a', [outcome('NonOK', 'bad')], 5000));
    await h.monitor.start((s) => h.statuses.push(s));
    await advance(h.clock, 2000);
    const emitted = h.statuses.length;
    await h.monitor.stop();
    await advance(h.clock, 60_000, 1000);
    assert.equal(h.statuses.length, emitted, 'nothing is emitted after stop');
    assert.deepEqual(h.executor.startsOf('/a'), [0]);
    assert.equal(h.clock.pendingTimers(), 0);
    assert.deepEqual(h.monitor.health(), { up: false, healthy: false, detail: 'not started' });
  });
});

describe('PluginScheduler', () => {
  it('groups rules by effective interval in order of appearance', () => {
    assert.deepEqual(PluginScheduler.group([30, 10, 30, 5]), [
      { intervalMs: 30, rules: [0, 2] },
      { intervalMs: 10, rules: [1] },
      { intervalMs: 5, rules: [3] },
    ]);
  });

  it('skips grid points missed during a stall instead of firing a burst', async () => {
    // A clock whose timers fire only when told, so one can fire late, as after a blocked event loop.
    let now = T0;
    const timers: { at: number; fn: () => void; cancelled: boolean }[] = [];
    const clock: Clock = {
      now: () => now,
      hrtime: () => BigInt(now) * 1_000_000n,
      setTimeout(fn, ms) {
        const t = { at: now + ms, fn, cancelled: false };
        timers.push(t);
        return { cancel: () => (t.cancelled = true) };
      },
    };
    const starts: number[] = [];
    const scheduler = new PluginScheduler({
      clock,
      random: () => 0,
      splayMs: 0,
      groups: [{ intervalMs: 1000, rules: [0] }],
      runBatch: async () => {
        starts.push(now - T0);
      },
    });
    await scheduler.start();
    now = T0 + 3500;
    timers.shift()?.fn();
    await settle();
    assert.deepEqual(starts, [0, 3500]);
    assert.deepEqual(
      timers.filter((t) => !t.cancelled).map((t) => t.at - T0),
      [4000],
      'the next tick is the next grid point, not 2000 and 3000 in a burst',
    );
    scheduler.stop();
  });
});

describe('Semaphore', () => {
  it('hands slots to waiters in FIFO order and wakes everyone on close', async () => {
    const s = new Semaphore(1);
    const order: string[] = [];
    const first = await s.acquire();
    const second = s.acquire().then((release) => {
      order.push('second');
      return release;
    });
    const third = s.acquire().then(() => order.push('third'));
    await settle();
    assert.deepEqual(order, []);
    first();
    first(); // A double release must not mint a second slot.
    const releaseSecond = await second;
    await settle();
    assert.deepEqual(order, ['second']);
    s.close();
    await third;
    assert.deepEqual(order, ['second', 'third']);
    releaseSecond();
  });
});
