import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { createKmsgSource } from '../../../../src/sources/kmsg/source.ts';
import { SourceHub } from '../../../../src/sources/hub.ts';
import { hostPaths } from '../../../../src/host/paths.ts';
import { FakeKmsgDevice } from '../../../support/fake-kmsg-device.ts';
import { readerDeps } from '../../../support/fake-reader-harness.ts';
import { FakeClock } from '../../../../src/core/clock.ts';
import { harness, HOUR, T0 } from './harness.ts';

// The fake uptime is 1000 s: a lookback of an hour covers the whole boot, 5 minutes does not.
describe('kmsg start position (start-up summary)', () => {
  it('a lookback longer than the uptime reads from the start of the ring, and delivers its oldest record', () => {
    const h = harness({ lookbackMs: HOUR });
    h.device.write('first record of the boot', { usec: 1_000 });
    h.reader.start();
    h.clock.advance(0);
    assert.equal(h.reader.startsFrom, 'from the start of the ring');
    assert.deepEqual(h.messages(), ['first record of the boot']);
  });

  it('a shorter lookback names the time it reads from, and skips what is older', () => {
    const h = harness({ lookbackMs: 300_000 });
    h.device.write('older than the lookback', { usec: 1_000 });
    h.reader.start();
    h.clock.advance(0);
    assert.equal(
      h.reader.startsFrom,
      `from the lookback: records since ${new Date(T0 - 300_000).toISOString()}`,
    );
    assert.deepEqual(h.messages(), []);
  });

  it('lookback 0 reads new records only; a delay is named', () => {
    const none = harness({ lookbackMs: 0 });
    none.reader.start();
    assert.equal(none.reader.startsFrom, 'new records only (lookback 0s)');
    const delayed = harness({ lookbackMs: HOUR, delayMs: 30_000 });
    delayed.reader.start();
    assert.equal(
      delayed.reader.startsFrom,
      'from the start of the ring, after the first 30s of boot (delay)',
    );
  });

  it('unknown until the boot time is read: an unreadable uptime gives no position', () => {
    const h = harness({
      fs: {
        readFileSync: () => {
          throw new Error('ENOENT');
        },
      },
    });
    h.reader.start();
    assert.equal(h.reader.startsFrom, undefined);
    h.reader.stop();
  });

  it('the hub reports one position per shared kmsg reader, named by its source', () => {
    const deps = { ...readerDeps(new FakeClock(T0)), paths: hostPaths('/') };
    const hub = new SourceHub();
    const fs = { readFileSync: () => '1000.00 1800.50\n' };
    const config = (source: string, lookbackMs: number) => ({
      file: `${source}.yaml`,
      source,
      pluginConfig: {},
      logPath: '',
      lookbackMs,
      delayMs: 0,
    });
    const open = (source: string, lookbackMs: number) => {
      const device = new FakeKmsgDevice();
      const s = hub.share(`kmsg-${lookbackMs}`, () =>
        createKmsgSource(config(source, lookbackMs), deps, { device, fs }),
      );
      s.start(() => {});
      return s;
    };
    assert.deepEqual(hub.positions(), []);
    const kernel = open('kernel-monitor', HOUR);
    open('readonly-monitor', HOUR);
    open('kernel-counter', 300_000);
    assert.equal(kernel.position?.(), 'kernel-monitor: from the start of the ring');
    assert.deepEqual(hub.positions(), [
      'kernel-monitor: from the start of the ring',
      `kernel-counter: from the lookback: records since ${new Date(T0 - 300_000).toISOString()}`,
    ]);
  });
});
