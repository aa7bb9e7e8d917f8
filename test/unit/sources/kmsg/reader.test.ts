import assert from 'node:assert/strict';
import { constants } from 'node:fs';
import { describe, it } from 'node:test';
import { BOOT, harness, metric, skipped, T0 } from './harness.ts';

describe('KmsgReader start position', () => {
  it('delivers only backlog records at or after now − lookback, stamped boot time + usec', async () => {
    const h = harness({ lookbackMs: 300_000 });
    h.device.write('boot noise', { usec: 100_000_000 });
    h.device.write('just before the window', { usec: 699_999_999 });
    h.device.write('first in the window', { usec: 700_000_000 });
    h.device.write('recent', { usec: 950_123_456 });
    h.reader.start();
    h.clock.advance(0);
    assert.deepEqual(h.batches, [
      [
        { timestamp: BOOT + 700_000, message: 'first in the window' },
        { timestamp: BOOT + 950_123, message: 'recent' },
      ],
    ]);
    assert.equal(await skipped(h.registry, 'before_start'), 2);
    assert.equal(await metric(h.registry, 'npd_log_lines_read_total'), 4);
  });

  it('skips the delay after boot even when lookback reaches further back', async () => {
    const h = harness({ lookbackMs: 3_600_000, delayMs: 30_000 });
    h.device.write('during boot', { usec: 29_999_000 });
    h.device.write('after the delay', { usec: 30_000_000 });
    h.reader.start();
    h.clock.advance(0);
    assert.deepEqual(h.messages(), ['after the delay']);
    assert.equal(await skipped(h.registry, 'before_start'), 1);
  });

  it('does not filter live records by time once the backlog is drained', () => {
    const h = harness({ lookbackMs: 0 });
    h.device.write('old', { usec: 10_000_000 });
    h.reader.start();
    h.clock.advance(0);
    assert.deepEqual(h.batches, []);
    // Boot time from /proc/uptime is approximate; a new record may look a little older than start.
    h.device.write('new but stamped early', { usec: 999_990_000 });
    h.clock.advance(199);
    assert.deepEqual(h.batches, []);
    h.clock.advance(1);
    assert.deepEqual(h.messages(), ['new but stamped early']);
  });
});

describe('KmsgReader device handling', () => {
  it('opens the injected path read-only and non-blocking', () => {
    const h = harness({ path: '/host/dev/kmsg' });
    h.reader.start();
    assert.deepEqual(h.device.opened, [
      { path: '/host/dev/kmsg', flags: constants.O_RDONLY | constants.O_NONBLOCK },
    ]);
    assert.deepEqual(h.reader.health(), { up: true, healthy: true });
  });

  it('stops draining at EAGAIN and polls again after the interval', () => {
    const h = harness({ pollIntervalMs: 500 });
    h.device.write('a');
    h.device.write('b');
    h.reader.start();
    h.clock.advance(0);
    assert.equal(h.device.readCalls, 3);
    assert.equal(h.clock.pendingTimers(), 1);
    h.clock.advance(499);
    assert.equal(h.device.readCalls, 3);
    h.clock.advance(1);
    assert.equal(h.device.readCalls, 4);
    h.device.write('c');
    h.clock.advance(500);
    assert.deepEqual(
      h.batches.map((b) => b.map((l) => l.message)),
      [['a', 'b'], ['c']],
    );
  });

  it('caps one drain and continues on the next tick without waiting a poll interval', () => {
    const h = harness({ maxRecordsPerTick: 100 });
    for (let i = 0; i < 250; i++) h.device.write(`flood ${i}`);
    h.reader.start();
    h.clock.advance(0);
    assert.deepEqual(
      h.batches.map((b) => b.length),
      [100, 100, 50],
    );
    assert.equal(h.batches[2]?.at(-1)?.message, 'flood 249');
    assert.equal(h.device.readCalls, 251);
  });

  it('polls a flooded ring every 10 ms and a quiet one every poll interval', () => {
    const h = harness();
    for (let i = 0; i < 40; i++) h.device.write(`burst ${i}`);
    h.reader.start();
    h.clock.advance(0);
    assert.equal(h.batches.length, 1);
    for (let i = 0; i < 5; i++) h.device.write(`trickle ${i}`);
    h.clock.advance(10);
    assert.equal(h.batches.length, 2, 'read 10 ms after a busy drain');
    h.device.write('late');
    h.clock.advance(10);
    assert.equal(h.batches.length, 2, 'after a quiet drain, not before the 200 ms interval');
    h.clock.advance(190);
    assert.equal(h.batches.length, 3);
  });

  it('keeps dictionary lines out of messages and unescapes the text', () => {
    const h = harness();
    h.device.write('mlx5_core 0000:03:00.0 enp3s0f0: Link down', {
      dict: { SUBSYSTEM: 'pci', DEVICE: '+pci:0000:03:00.0' },
    });
    h.device.write('rcu: \\x09RCU restricting CPUs');
    h.reader.start();
    h.clock.advance(0);
    assert.deepEqual(h.messages(), [
      'mlx5_core 0000:03:00.0 enp3s0f0: Link down',
      'rcu: \tRCU restricting CPUs',
    ]);
  });

  it('drops non-kernel facilities only when requireKernelFacility is set', async () => {
    for (const requireKernelFacility of [false, true]) {
      const h = harness({ requireKernelFacility });
      h.device.write('kernel', { prio: 6 });
      h.device.write('user notice', { prio: 13 });
      h.device.write('echo <3> into kmsg', { prio: 11 });
      h.reader.start();
      h.clock.advance(0);
      const expected = requireKernelFacility ? ['kernel'] : ['kernel', 'user notice', 'echo <3> into kmsg'];
      assert.deepEqual(h.messages(), expected);
      assert.equal(await skipped(h.registry, 'not_kernel'), requireKernelFacility ? 2 : 0);
    }
  });

  it('counts malformed and empty records and accounts for every record read', async () => {
    const h = harness();
    h.device.write('ok');
    h.device.writeRaw('garbage without a header\n');
    h.device.writeRaw('6,2,not-a-number,-;bad timestamp\n');
    h.device.write('   ');
    h.device.write('fine');
    h.reader.start();
    h.clock.advance(0);
    assert.deepEqual(h.messages(), ['ok', 'fine']);
    assert.equal(await metric(h.registry, 'npd_log_lines_malformed_total'), 2);
    assert.equal(await skipped(h.registry, 'empty'), 1);
    // Unparsable records still occupy their seq, so they are not also reported as lost.
    assert.equal(await metric(h.registry, 'npd_kmsg_records_lost_total'), 0);
    assert.equal(await metric(h.registry, 'npd_log_lines_read_total'), 5);
  });

  it('labels metrics with the configured source', async () => {
    const h = harness({ source: 'kernel-monitor' });
    h.device.write('x');
    h.reader.start();
    h.clock.advance(0);
    assert.equal(await metric(h.registry, 'npd_log_lines_read_total', { source: 'kernel-monitor' }), 1);
    assert.equal(await metric(h.registry, 'npd_log_lines_read_total'), 0);
  });

  it('survives a throwing consumer and counts the lines it dropped', async () => {
    let calls = 0;
    const h = harness({
      onLines: () => {
        calls += 1;
        if (calls === 1) throw new Error('consumer bug');
      },
    });
    h.device.write('a');
    h.device.write('b');
    h.reader.start();
    h.clock.advance(0);
    h.device.write('c');
    h.clock.advance(200);
    assert.equal(calls, 2);
    assert.equal(await skipped(h.registry, 'callback_error'), 2);
    assert.deepEqual(h.reader.health(), { up: true, healthy: true });
  });

  it('reports not up before start', () => {
    const h = harness();
    assert.equal(h.reader.health().up, false);
    assert.equal(h.clock.now(), T0);
  });
});
