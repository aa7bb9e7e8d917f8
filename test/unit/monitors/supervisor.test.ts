import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { setImmediate as tick } from 'node:timers/promises';
import type { Registry } from 'prom-client';
import { FakeClock } from '../../../src/core/clock.ts';
import { silentLogger } from '../../../src/core/logger.ts';
import { createRegistry } from '../../../src/core/metrics.ts';
import type { MonitorHealth, Status } from '../../../src/core/types.ts';
import type { Monitor } from '../../../src/monitors/monitor.ts';
import { MonitorSupervisor } from '../../../src/monitors/supervisor.ts';

class FakeMonitor implements Monitor {
  readonly source: string;
  readonly startedAt: number[] = [];
  stops = 0;
  failuresLeft: number;
  health_: MonitorHealth = { up: true, healthy: true };
  emit: ((s: Status) => void) | undefined;
  private readonly clock: FakeClock;

  /** Its first `failures` starts throw. */
  constructor(source: string, clock: FakeClock, failures = 0) {
    this.source = source;
    this.clock = clock;
    this.failuresLeft = failures;
  }

  async start(emit: (s: Status) => void): Promise<void> {
    this.startedAt.push(this.clock.now());
    if (this.failuresLeft > 0) {
      this.failuresLeft--;
      throw new Error('cannot open /dev/kmsg');
    }
    this.emit = emit;
  }

  async stop(): Promise<void> {
    this.stops++;
  }

  health(): MonitorHealth {
    return this.health_;
  }
}

/** Advances fake time in 100 ms steps, letting the supervisor's promise chains settle between steps. */
async function advance(clock: FakeClock, ms: number): Promise<void> {
  for (let done = 0; done < ms; done += 100) {
    clock.advance(Math.min(100, ms - done));
    for (let i = 0; i < 5; i++) await tick();
  }
}

async function value(registry: Registry, name: string, source: string): Promise<number | undefined> {
  const metric = (await registry.getMetricsAsJSON()).find((m) => m.name === name);
  return metric?.values.find((v) => v.labels.source === source)?.value;
}

function setup(monitors: (clock: FakeClock) => FakeMonitor[]) {
  const clock = new FakeClock(0);
  const registry = createRegistry();
  const ms = monitors(clock);
  const supervisor = new MonitorSupervisor(ms, { clock, logger: silentLogger(), registry });
  return { clock, registry, monitors: ms, supervisor };
}

describe('MonitorSupervisor', () => {
  it('starts every monitor and passes their statuses through', async () => {
    const { monitors, supervisor } = setup((c) => [new FakeMonitor('a', c), new FakeMonitor('b', c)]);
    const got: Status[] = [];
    await supervisor.start((s) => got.push(s));
    assert.deepEqual(supervisor.monitors(), monitors);
    monitors[1]?.emit?.({ source: 'b', events: [], conditions: [] });
    assert.deepEqual(got, [{ source: 'b', events: [], conditions: [] }]);
    assert.deepEqual(supervisor.liveness(), { ok: true, detail: 'a: healthy\nb: healthy\n' });
  });

  it('retries a failed start with exponential backoff and counts each failure', async () => {
    const { clock, registry, monitors, supervisor } = setup((c) => [
      new FakeMonitor('kernel-monitor', c, 4),
      new FakeMonitor('ok', c),
    ]);
    await supervisor.start(() => {});
    await advance(clock, 20_000);
    const m = monitors[0] as FakeMonitor;
    assert.deepEqual(m.startedAt, [0, 1_000, 3_000, 7_000, 15_000]);
    assert.equal(m.stops, 4, 'a failed start is cleaned up with stop()');
    assert.equal(await value(registry, 'npd_monitor_failures_total', 'kernel-monitor'), 4);
    assert.equal(await value(registry, 'npd_monitor_failures_total', 'ok'), 0, 'at 0 from the start');
    assert.deepEqual(monitors[1]?.startedAt, [0]);
    await supervisor.stop();
    assert.equal(clock.pendingTimers(), 0);
  });

  it('caps the backoff at 60 s', async () => {
    const { clock, monitors, supervisor } = setup((c) => [new FakeMonitor('m', c, 9)]);
    await supervisor.start(() => {});
    await advance(clock, 400_000);
    const times = (monitors[0] as FakeMonitor).startedAt;
    const gaps = times.slice(1).map((t, i) => t - (times[i] as number));
    assert.deepEqual(gaps, [1_000, 2_000, 4_000, 8_000, 16_000, 32_000, 60_000, 60_000, 60_000]);
  });

  it('stop() cancels a pending retry and stops every monitor', async () => {
    const { clock, monitors, supervisor } = setup((c) => [new FakeMonitor('m', c, 100)]);
    await supervisor.start(() => {});
    await supervisor.stop();
    await advance(clock, 10_000);
    assert.deepEqual(monitors[0]?.startedAt, [0]);
    assert.equal(monitors[0]?.stops, 2);
  });

  it('reports liveness false only once a monitor has been down for more than 60 s', async () => {
    const { clock, monitors, supervisor } = setup((c) => [
      new FakeMonitor('m', c),
      new FakeMonitor('fine', c),
    ]);
    await supervisor.start(() => {});
    const m = monitors[0] as FakeMonitor;
    m.health_ = { up: true, healthy: false, detail: 'journal missing' };
    assert.deepEqual(supervisor.liveness(), {
      ok: true,
      detail: 'm: degraded (journal missing)\nfine: healthy\n',
    });
    await advance(clock, 60_000);
    assert.equal(supervisor.liveness().ok, true);
    clock.advance(1);
    assert.deepEqual(supervisor.liveness(), {
      ok: false,
      detail: 'm: dead (journal missing)\nfine: healthy\n',
    });
    m.health_ = { up: true, healthy: true };
    assert.equal(supervisor.liveness().ok, true);
    m.health_ = { up: false, healthy: false };
    clock.advance(60_000);
    assert.equal(supervisor.liveness().ok, true, 'the down time restarts after a recovery');
  });

  it('counts a monitor that keeps failing to start as restarting, then dead', async () => {
    const { clock, supervisor } = setup((c) => [new FakeMonitor('m', c, 100)]);
    await supervisor.start(() => {});
    assert.deepEqual(supervisor.liveness(), { ok: true, detail: 'm: restarting (not started)\n' });
    await advance(clock, 61_000);
    assert.deepEqual(supervisor.liveness(), { ok: false, detail: 'm: dead (not started)\n' });
  });

  it('measures down time from the failure, not from the first liveness() call', {}, async () => {
    const { clock, supervisor } = setup((c) => [new FakeMonitor('m', c, 100)]);
    await supervisor.start(() => {});
    await advance(clock, 61_000);
    assert.equal(supervisor.liveness().ok, false);
  });

  it('a running monitor that turns unhealthy is dead 60 s after the failure, with no probe between', async () => {
    const { clock, monitors, supervisor } = setup((c) => [new FakeMonitor('m', c)]);
    await supervisor.start(() => {});
    await advance(clock, 10_000);
    (monitors[0] as FakeMonitor).health_ = { up: true, healthy: false, detail: 'read error' };
    await advance(clock, 66_000);
    assert.deepEqual(supervisor.liveness(), { ok: false, detail: 'm: dead (read error)\n' });
    await supervisor.stop();
  });

  it('a waiting monitor (its input is absent here) says why but never fails liveness', async () => {
    const { clock, monitors, supervisor } = setup((c) => [new FakeMonitor('m', c)]);
    await supervisor.start(() => {});
    const detail = 'no journal files in /host/var/log/journal';
    (monitors[0] as FakeMonitor).health_ = { up: true, healthy: false, waiting: true, detail };
    await advance(clock, 10 * 60_000);
    assert.deepEqual(supervisor.liveness(), { ok: true, detail: `m: waiting (${detail})\n` });
    (monitors[0] as FakeMonitor).health_ = { up: true, healthy: false, detail };
    await advance(clock, 61_000);
    assert.equal(supervisor.liveness().ok, false, 'control: the same health without waiting is dead');
    await supervisor.stop();
  });

  it("counts from the monitor's own `since` when it reports one", async () => {
    const { clock, monitors, supervisor } = setup((c) => [new FakeMonitor('m', c)]);
    await supervisor.start(() => {});
    await advance(clock, 30_000);
    (monitors[0] as FakeMonitor).health_ = { up: false, healthy: false, since: 1_000 };
    assert.equal(supervisor.liveness().ok, true, 'down 29 s');
    clock.advance(31_000);
    assert.equal(supervisor.liveness().ok, true, 'down exactly 60 s');
    clock.advance(1);
    assert.equal(supervisor.liveness().ok, false, 'down 60 s + 1 ms since its failure at 1 s');
    await supervisor.stop();
  });

  it('samples npd_monitor_up and npd_monitor_healthy at scrape time', async () => {
    const { clock, registry, monitors, supervisor } = setup((c) => [
      new FakeMonitor('a', c),
      new FakeMonitor('b', c, 1),
    ]);
    await supervisor.start(() => {});
    assert.equal(await value(registry, 'npd_monitor_up', 'a'), 1);
    assert.equal(await value(registry, 'npd_monitor_healthy', 'a'), 1);
    assert.equal(await value(registry, 'npd_monitor_up', 'b'), 0, 'not started yet');
    assert.equal(await value(registry, 'npd_monitor_healthy', 'b'), 0);
    (monitors[0] as FakeMonitor).health_ = { up: true, healthy: false };
    assert.equal(await value(registry, 'npd_monitor_up', 'a'), 1);
    assert.equal(await value(registry, 'npd_monitor_healthy', 'a'), 0);
    (monitors[0] as FakeMonitor).health_ = { up: false, healthy: false };
    assert.equal(await value(registry, 'npd_monitor_up', 'a'), 0);
    await advance(clock, 1_000);
    assert.equal(await value(registry, 'npd_monitor_up', 'b'), 1, 'started by the retry');
  });
});
