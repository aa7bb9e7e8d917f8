import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { type KmsgDevice, snapshotKmsg } from '../../../src/host/clib/kmsg-snapshot.ts';

function errno(code: string): Error {
  return Object.assign(new Error(code), { code });
}

/** Hands out the records (or errno codes) in order, then EAGAIN; counts opens and closes. */
function device(records: (string | Error)[]): KmsgDevice & { closed: number } {
  let i = 0;
  const dev = {
    closed: 0,
    openSync: () => 7,
    readSync: (_fd: number, buffer: Buffer) => {
      const next = records[i++];
      if (next === undefined) throw errno('EAGAIN');
      if (next instanceof Error) throw next;
      return buffer.write(`${next}\n`);
    },
    closeSync: () => {
      dev.closed++;
    },
  };
  return dev;
}

describe('snapshotKmsg', () => {
  it('reads to the end of the ring and closes the device', () => {
    const dev = device(['6,1,100,-;one', '3,2,200,-;two']);
    const snap = snapshotKmsg('/dev/kmsg', { maxBytes: 1000, maxRecords: 100 }, dev);
    assert.deepEqual(snap, { text: '6,1,100,-;one\n3,2,200,-;two\n', truncated: false, lost: 0 });
    assert.equal(dev.closed, 1);
  });

  it('keeps only the newest records within maxBytes', () => {
    const records = Array.from({ length: 50 }, (_, n) => `6,${n},0,-;record ${n}`);
    const snap = snapshotKmsg('/dev/kmsg', { maxBytes: 60, maxRecords: 1000 }, device(records));
    assert.ok(Buffer.byteLength(snap.text) <= 60);
    assert.ok(snap.text.endsWith('record 49\n'));
    assert.equal(snap.truncated, true);
  });

  it('counts records overwritten while reading (EPIPE) and goes on', () => {
    const snap = snapshotKmsg(
      '/dev/kmsg',
      { maxBytes: 1000, maxRecords: 100 },
      device([errno('EPIPE'), '6,9,0,-;after']),
    );
    assert.deepEqual(snap, { text: '6,9,0,-;after\n', truncated: false, lost: 1 });
  });

  it('stops after maxRecords so a flood cannot keep it reading', () => {
    const records = Array.from({ length: 10 }, (_, n) => `6,${n},0,-;r${n}`);
    const snap = snapshotKmsg('/dev/kmsg', { maxBytes: 1000, maxRecords: 3 }, device(records));
    assert.equal(snap.text, '6,0,0,-;r0\n6,1,0,-;r1\n6,2,0,-;r2\n');
    assert.equal(snap.truncated, true);
  });

  it('other errors propagate, and the device is still closed', () => {
    const dev = device([errno('EACCES')]);
    assert.throws(() => snapshotKmsg('/dev/kmsg', { maxBytes: 10, maxRecords: 10 }, dev), /EACCES/);
    assert.equal(dev.closed, 1);
  });
});
