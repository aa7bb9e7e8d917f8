import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { FakeKmsgDevice } from '../../../support/fake-kmsg-device.ts';
import { harness, metric, skipped } from './harness.ts';

describe('KmsgReader record loss', () => {
  it('counts records overwritten before they were read (EPIPE) from the seq gap', async () => {
    const h = harness();
    for (let i = 0; i < 5; i++) h.device.write(`early ${i}`);
    h.reader.start();
    h.clock.advance(0);
    for (let i = 5; i < 15; i++) h.device.write(`burst ${i}`);
    h.device.overwrite(10);
    h.clock.advance(200);
    assert.deepEqual(
      h.batches[1]?.map((l) => l.message),
      ['burst 10', 'burst 11', 'burst 12', 'burst 13', 'burst 14'],
    );
    assert.equal(await metric(h.registry, 'npd_kmsg_records_lost_total'), 5);
    assert.deepEqual(h.reader.health(), { up: true, healthy: true });
  });

  it('counts exactly one lost record when one does not fit the buffer (EINVAL)', async () => {
    const h = harness({ bufferBytes: 64 });
    h.device.write('short');
    h.device.write('x'.repeat(100));
    h.device.write('after');
    h.reader.start();
    h.clock.advance(0);
    assert.deepEqual(h.messages(), ['short', 'after']);
    assert.equal(await metric(h.registry, 'npd_kmsg_records_lost_total'), 1);
  });

  it('counts one lost record when the very first read is EINVAL', async () => {
    const h = harness({ bufferBytes: 64 });
    h.device.write('y'.repeat(100));
    h.device.write('next');
    h.device.write('and next');
    h.reader.start();
    h.clock.advance(0);
    assert.deepEqual(h.messages(), ['next', 'and next']);
    assert.equal(await metric(h.registry, 'npd_kmsg_records_lost_total'), 1);
  });
});

describe('KmsgReader recovery', () => {
  it('reopens with doubling backoff after EIO and delivers no duplicates', async () => {
    const h = harness();
    for (const m of ['a', 'b', 'c']) h.device.write(m);
    h.reader.start();
    h.clock.advance(0);
    h.device.readErrors.push('EIO');
    h.device.openErrors.push('EACCES', 'EACCES');
    h.device.write('d');
    h.clock.advance(200);
    assert.equal(h.device.openFds(), 0);
    const health = h.reader.health();
    assert.equal(health.up, true);
    assert.equal(health.healthy, false);
    assert.match(health.detail ?? '', /read \/dev\/kmsg: EIO/);
    h.clock.advance(999);
    assert.equal(h.device.opened.length, 1);
    h.clock.advance(1); // 1 s: EACCES
    h.clock.advance(1999);
    assert.equal(h.device.opened.length, 2);
    h.clock.advance(1); // 2 s later: EACCES again
    assert.match(h.reader.health().detail ?? '', /open \/dev\/kmsg: EACCES/);
    h.device.write('e');
    h.clock.advance(3999);
    assert.equal(h.device.opened.length, 3);
    h.clock.advance(1); // 4 s later: success, and the device starts over at its oldest record
    assert.equal(h.device.opened.length, 4);
    assert.deepEqual(h.messages(), ['a', 'b', 'c', 'd', 'e']);
    assert.equal(await skipped(h.registry, 'duplicate'), 3);
    assert.equal(await metric(h.registry, 'npd_monitor_restarts_total'), 3);
    assert.equal(await metric(h.registry, 'npd_kmsg_records_lost_total'), 0);
    assert.deepEqual(h.reader.health(), { up: true, healthy: true });
  });

  it('resets the backoff after a successful drain', async () => {
    const h = harness();
    h.device.openErrors.push('EIO', 'EIO');
    h.reader.start();
    h.clock.advance(3000); // fails at 0, 1 s; opens at 3 s
    assert.equal(h.device.opened.length, 3);
    h.device.readErrors.push('EBADF');
    h.clock.advance(200);
    assert.equal(h.device.openFds(), 0);
    h.clock.advance(1000);
    assert.equal(h.device.opened.length, 4);
    assert.equal(await metric(h.registry, 'npd_monitor_restarts_total'), 3);
  });

  it('caps the backoff at 30 s', () => {
    const device = new FakeKmsgDevice();
    const h = harness({}, device);
    const attempts: number[] = [];
    const open = device.openSync.bind(device);
    device.openSync = (path, flags) => {
      attempts.push(h.clock.now());
      return open(path, flags);
    };
    device.openErrors.push(...Array<string>(8).fill('ENOENT'));
    h.reader.start();
    assert.deepEqual(h.reader.health(), {
      up: true,
      healthy: false,
      detail: 'open /dev/kmsg: ENOENT: fake kmsg device',
      since: h.clock.now(),
    });
    h.clock.advance(200_000);
    const gaps = attempts.slice(1).map((t, i) => t - (attempts[i] as number));
    assert.deepEqual(gaps, [1000, 2000, 4000, 8000, 16_000, 30_000, 30_000, 30_000]);
    assert.deepEqual(h.reader.health(), { up: true, healthy: true });
  });

  it('retries when /proc/uptime cannot be read', () => {
    let broken = true;
    const h = harness({
      fs: {
        readFileSync: () => {
          if (broken) throw new Error('EACCES');
          return '1000.00 0.00\n';
        },
      },
    });
    h.device.write('hello', { usec: 999_000_000 });
    h.reader.start();
    assert.match(h.reader.health().detail ?? '', /boot time: .*EACCES/);
    assert.equal(h.device.opened.length, 0);
    broken = false;
    h.clock.advance(1000);
    assert.deepEqual(h.messages(), ['hello']);
  });
});

describe('KmsgReader stop', () => {
  it('closes the fd and cancels timers, idempotently', () => {
    const h = harness();
    h.device.write('a');
    h.reader.start();
    h.clock.advance(0);
    h.reader.stop();
    h.reader.stop();
    assert.equal(h.device.closed.length, 1);
    assert.equal(h.device.openFds(), 0);
    assert.equal(h.clock.pendingTimers(), 0);
    assert.deepEqual(h.reader.health(), { up: false, healthy: false, detail: 'stopped' });
    const reads = h.device.readCalls;
    h.device.write('b');
    h.clock.advance(10_000);
    assert.equal(h.device.readCalls, reads);
    assert.deepEqual(h.messages(), ['a']);
  });

  it('cancels a pending reopen', () => {
    const h = harness();
    h.device.openErrors.push('EIO');
    h.reader.start();
    h.reader.stop();
    h.clock.advance(60_000);
    assert.equal(h.device.opened.length, 1);
    assert.equal(h.clock.pendingTimers(), 0);
  });

  it('is safe before start and from inside the consumer', () => {
    const before = harness();
    before.reader.stop();
    assert.equal(before.device.closed.length, 0);
    let reader: { stop(): void } | undefined;
    const h = harness({ maxRecordsPerTick: 1, onLines: () => reader?.stop() });
    reader = h.reader;
    for (const m of ['a', 'b', 'c']) h.device.write(m);
    h.reader.start();
    h.clock.advance(1000);
    assert.equal(h.device.readCalls, 1);
    assert.equal(h.clock.pendingTimers(), 0);
    assert.equal(h.device.openFds(), 0);
  });
});
