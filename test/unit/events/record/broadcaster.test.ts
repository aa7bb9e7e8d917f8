import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { Registry } from 'prom-client';
import { FakeClock } from '../../../../src/core/clock.ts';
import { silentLogger } from '../../../../src/core/logger.ts';
import { Broadcaster, type BroadcasterOptions } from '../../../../src/events/record/broadcaster.ts';
import { captureLogger, drain, metricValue } from './helpers.ts';

function make(extra: Partial<BroadcasterOptions> = {}) {
  const registry = new Registry();
  const b = new Broadcaster<number>({ registry, logger: silentLogger(), source: 'src', ...extra });
  const dropped = (labels: Record<string, string>) =>
    metricValue(registry, 'npd_events_dropped_total', labels);
  return { b, registry, dropped };
}

/** A handler that holds each event until released, recording what it has seen. */
function gatedHandler() {
  const seen: number[] = [];
  const gates: (() => void)[] = [];
  let active = 0;
  let maxActive = 0;
  const handler = async (n: number) => {
    seen.push(n);
    active++;
    maxActive = Math.max(maxActive, active);
    await new Promise<void>((resolve) => gates.push(resolve));
    active--;
  };
  const releaseOne = () => gates.shift()?.();
  return { seen, handler, releaseOne, maxActive: () => maxActive };
}

describe('Broadcaster distribution', () => {
  it('delivers asynchronously, in order, to every watcher', async () => {
    const { b } = make();
    const a: number[] = [];
    const c: number[] = [];
    b.watch('a', (n) => {
      a.push(n);
    });
    b.watch('c', (n) => {
      c.push(n);
    });
    for (let i = 0; i < 5; i++) assert.equal(b.actionOrDrop(i), true);
    assert.deepEqual(a, []);
    await drain();
    assert.deepEqual(a, [0, 1, 2, 3, 4]);
    assert.deepEqual(c, [0, 1, 2, 3, 4]);
  });

  it('a watcher sees only events queued after it joined', async () => {
    const { b } = make();
    b.watch('first', () => {});
    b.actionOrDrop(1);
    const late: number[] = [];
    b.watch('late', (n) => {
      late.push(n);
    });
    b.actionOrDrop(2);
    await drain();
    assert.deepEqual(late, [2]);
  });

  it('handles one event at a time per watcher (head-of-line blocking)', async () => {
    const { b } = make();
    const g = gatedHandler();
    b.watch('slow', g.handler);
    b.actionOrDrop(1);
    b.actionOrDrop(2);
    await drain();
    assert.deepEqual(g.seen, [1]);
    g.releaseOne();
    await drain();
    assert.deepEqual(g.seen, [1, 2]);
    assert.equal(g.maxActive(), 1);
  });

  it('counts a handler that throws and keeps delivering', async () => {
    const { b, registry } = make();
    const seen: number[] = [];
    b.watch('flaky', (n) => {
      seen.push(n);
      if (n === 1) throw new Error('boom');
    });
    b.actionOrDrop(1);
    b.actionOrDrop(2);
    await drain();
    assert.deepEqual(seen, [1, 2]);
    assert.equal(await metricValue(registry, 'npd_events_watcher_errors_total', { watcher: 'flaky' }), 1);
  });
});

describe('Broadcaster drop points (DropIfChannelFull)', () => {
  it('drops at the incoming queue (1000), counts each drop and logs at most once a minute', async () => {
    const { logger, records } = captureLogger();
    const clock = new FakeClock();
    const { b, dropped } = make({ logger, clock });
    b.watch('w', () => {});
    const accepted = Array.from({ length: 3000 }, (_, i) => b.actionOrDrop(i)).filter(Boolean).length;
    assert.equal(accepted, 1000);
    assert.equal(await dropped({ point: 'incoming', source: 'src' }), 2000);
    const warnings = () => records.filter((r) => /too many queued events/.test(r.msg));
    assert.equal(warnings().length, 1, 'a storm of 2,000 drops is one log line, not 2,000');
    await drain();
    assert.equal(b.queued(), 0);
    clock.advance(60_000);
    for (let i = 0; i < 1003; i++) b.actionOrDrop(i);
    assert.equal(warnings().length, 2, 'the next minute logs again');
    assert.equal(warnings()[1]?.count, 2000, 'with how many were dropped since the last line');
  });

  it('drops at a full watcher queue (1000) for that watcher only', async () => {
    const { b, dropped } = make();
    const g = gatedHandler();
    const fast: number[] = [];
    b.watch('slow', g.handler);
    b.watch('fast', (n) => {
      fast.push(n);
    });
    b.actionOrDrop(0);
    await drain();
    // Event 0 is in the slow handler; 1..1000 fill its queue; 1001..1005 overflow it.
    for (let i = 1; i <= 1000; i++) b.actionOrDrop(i);
    await drain();
    for (let i = 1001; i <= 1005; i++) b.actionOrDrop(i);
    await drain();
    assert.equal(await dropped({ point: 'watcher', watcher: 'slow' }), 5);
    assert.equal(await dropped({ point: 'watcher', watcher: 'fast' }), 0);
    assert.equal(fast.length, 1006);
    for (let i = 0; i < 1001; i++) {
      g.releaseOne();
      await Promise.resolve();
      await Promise.resolve();
    }
    await drain();
    assert.deepEqual(
      g.seen,
      Array.from({ length: 1001 }, (_, i) => i),
    );
  });
});

describe('Broadcaster shutdown', () => {
  it('distributes queued events, closes watchers, then refuses actions (counted)', async () => {
    const { b, dropped } = make();
    const seen: number[] = [];
    const w = b.watch('w', (n) => {
      seen.push(n);
    });
    b.actionOrDrop(1);
    b.actionOrDrop(2);
    const done = b.shutdown();
    assert.equal(b.stopped, true);
    assert.equal(b.actionOrDrop(3), false);
    assert.equal(b.actionOrDrop(4), false);
    assert.throws(() => b.watch('late', () => {}), /already stopped/);
    await done;
    await w.done;
    assert.deepEqual(seen, [1, 2]);
    assert.equal(await dropped({ point: 'stopped' }), 2);
    assert.equal(b.shutdown(), done, 'shutdown is idempotent');
  });

  it('lets a watcher drain its own queue after distribution ends', async () => {
    const { b } = make();
    const g = gatedHandler();
    const w = b.watch('slow', g.handler);
    for (const n of [1, 2, 3]) b.actionOrDrop(n);
    await b.shutdown();
    let ended = false;
    void w.done.then(() => {
      ended = true;
    });
    await drain();
    assert.equal(ended, false);
    for (let i = 0; i < 3; i++) {
      g.releaseOne();
      await drain();
    }
    assert.equal(ended, true);
    assert.deepEqual(g.seen, [1, 2, 3]);
  });

  it('watcher.stop discards its queue, returns the count, and is idempotent', async () => {
    const { b } = make();
    const g = gatedHandler();
    const w = b.watch('slow', g.handler);
    for (const n of [1, 2, 3]) b.actionOrDrop(n);
    await drain();
    assert.equal(w.pending(), 2);
    assert.equal(w.stop(), 2);
    assert.equal(w.stop(), 0);
    await w.done;
    b.actionOrDrop(4);
    g.releaseOne();
    await drain();
    assert.deepEqual(g.seen, [1]);
  });
});
