import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { FakeClock } from '../../../../src/core/clock.ts';
import { FakeKmsgDevice } from '../../../support/fake-kmsg-device.ts';
import { harness, metric } from './harness.ts';

/** The fake ring with poll(2): a wait is pending until the test calls ready(). */
class PollingDevice extends FakeKmsgDevice {
  readonly waits: Array<{ fd: number; onReady: () => void; cancelled: boolean }> = [];
  /** When set, a wait cannot be armed (no koffi, no free fd). */
  unavailable = false;

  readonly waitReadable = (fd: number, onReady: () => void) => {
    if (this.unavailable) return undefined;
    const wait = { fd, onReady, cancelled: false };
    this.waits.push(wait);
    return () => {
      wait.cancelled = true;
    };
  };

  pending() {
    return this.waits.filter((w) => !w.cancelled);
  }

  /** The kernel logged: every pending wait fires. */
  ready(): void {
    for (const w of this.pending()) {
      w.cancelled = true;
      w.onReady();
    }
  }
}

describe('KmsgReader waiting in poll(2)', () => {
  it('sleeps in one wait when idle instead of polling on a timer, and drains soon after a wake', () => {
    const device = new PollingDevice();
    const h = harness({}, device);
    device.write('boot');
    h.reader.start();
    h.clock.advance(0);
    assert.deepEqual(h.messages(), ['boot']);
    assert.equal(device.pending().length, 0, 'after records, the timer looks again first');
    h.clock.advance(100);
    assert.equal(device.pending().length, 1, 'waits after 100 ms without a record');
    const reads = device.readCalls;
    h.clock.advance(60_000);
    assert.equal(device.readCalls, reads, 'no reads while nothing was logged');
    device.write('first of a flood');
    device.write('second');
    device.ready();
    assert.equal(h.messages().length, 1, 'the drain waits a moment so that a burst comes in one batch');
    h.clock.advance(10);
    assert.deepEqual(
      h.batches.at(-1)?.map((l) => l.message),
      ['first of a flood', 'second'],
    );
    h.clock.advance(100);
    assert.equal(device.pending().length, 1, 'waits again once quiet');
  });

  it('polls a busy ring on the timer and waits again once it is quiet', () => {
    const device = new PollingDevice();
    const h = harness({}, device);
    h.reader.start();
    h.clock.advance(0);
    for (let i = 0; i < 40; i++) device.write(`busy ${i}`);
    device.ready();
    h.clock.advance(10);
    assert.equal(device.pending().length, 0, 'a full batch means a flood: the timer polls next');
    device.write('tail');
    h.clock.advance(10);
    assert.equal(h.messages().at(-1), 'tail');
    assert.equal(device.pending().length, 0, 'a trickle stays on the timer');
    h.clock.advance(90);
    assert.equal(device.pending().length, 0);
    h.clock.advance(10);
    assert.equal(device.pending().length, 1, '10 empty drains in a row: back to poll(2)');
  });

  it('cancels the wait on stop and before closing the fd after a read error', async () => {
    const device = new PollingDevice();
    const h = harness({}, device);
    h.reader.start();
    h.clock.advance(0);
    const [first] = device.pending();
    device.readErrors.push('EIO');
    device.ready();
    h.clock.advance(10);
    assert.equal(first?.cancelled, true);
    assert.equal(device.openFds(), 0);
    assert.equal(await metric(h.registry, 'npd_monitor_restarts_total'), 1);
    h.clock.advance(1000);
    assert.equal(device.openFds(), 1, 'reopened after the backoff');
    assert.equal(device.pending().length, 1);
    h.reader.stop();
    assert.equal(device.pending().length, 0);
    device.write('after stop');
    device.ready();
    h.clock.advance(60_000);
    assert.deepEqual(h.messages(), []);
  });

  it('falls back to the timer when a wait cannot be armed', () => {
    const device = new PollingDevice();
    device.unavailable = true;
    const h = harness({}, device);
    h.reader.start();
    h.clock.advance(0);
    device.write('late');
    h.clock.advance(199);
    assert.deepEqual(h.messages(), []);
    h.clock.advance(1);
    assert.deepEqual(h.messages(), ['late']);
  });
});

/** What /dev/null or a regular file at the path does: poll(2) says readable at once, read() gives 0. */
class AlwaysReadable extends FakeKmsgDevice {
  clock: FakeClock | undefined;
  waitsArmed = 0;
  readonly waitReadable = (_fd: number, onReady: () => void) => {
    this.waitsArmed++;
    const timer = this.clock?.setTimeout(onReady, 0);
    return () => timer?.cancel();
  };
}

describe('KmsgReader on a device that is always readable but yields nothing', () => {
  it('backs off instead of spinning, counts each empty wake, and still reads what comes', async () => {
    const device = new AlwaysReadable();
    const h = harness({}, device);
    device.clock = h.clock;
    h.reader.start();
    for (let i = 0; i < 600; i++) h.clock.advance(100);
    assert.ok(device.waitsArmed <= 80, `${device.waitsArmed} waits in 60 s (a spin is ~6,000)`);
    assert.ok(device.readCalls <= 160, `${device.readCalls} reads in 60 s`);
    const spurious = await metric(h.registry, 'npd_kmsg_spurious_wakeups_total');
    assert.ok(spurious >= 40, `counted ${spurious} empty wakes`);
    device.write('late');
    for (let i = 0; i < 10; i++) h.clock.advance(100);
    assert.deepEqual(h.messages(), ['late'], 'read within the back-off cap of 1 s');
  });
});
