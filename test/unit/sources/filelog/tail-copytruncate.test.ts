// logrotate's copytruncate copies the followed file beside the path (a new inode, never at the path)
// and truncates it. The copy holds lines already read live: it must not be taken for a file rotated in
// and out between two looks and read again (issue 38 finding 10: 50 events for 40 lines). What it
// holds past the point reading had reached is read from there on, once; a file beside the path that
// is no copy is still read as a skipped generation (the negative control).
import assert from 'node:assert/strict';
import { appendFileSync, copyFileSync, renameSync, truncateSync, unlinkSync, writeFileSync } from 'node:fs';
import { describe, it } from 'node:test';
import type { FakeClock } from '../../../../src/core/clock.ts';
import { follow, lines } from './follow.ts';

const poll = (h: { clock: FakeClock }, times: number) => {
  for (let i = 0; i < times; i++) h.clock.advance(250);
};

/** 10 a, a rename rotation (.1), 10 b, `cp app.log app.log.2; : > app.log`, 10 c. */
function rotateThenCopytruncate(h: ReturnType<typeof follow>, copy: (path: string) => void) {
  writeFileSync(h.path, lines('a', 10));
  h.tail.start();
  poll(h, 4);
  renameSync(h.path, `${h.path}.1`);
  writeFileSync(h.path, lines('b', 10));
  poll(h, 4);
  copy(h.path);
  truncateSync(h.path, 0);
  poll(h, 4);
  appendFileSync(h.path, lines('c', 10));
  poll(h, 4);
}

/** The path deleted and created again with 10 d: a new file at the path makes the follower look beside it. */
function recreate(h: ReturnType<typeof follow>) {
  unlinkSync(h.path);
  poll(h, 2);
  writeFileSync(h.path, lines('d', 10));
  poll(h, 20);
}

describe('FileTail: copytruncate', () => {
  it('does not read the copy again when a later file at the path makes it look beside the path', (t) => {
    const h = follow(t, { maxBytesPerTick: 64 * 1024 });
    rotateThenCopytruncate(h, (path) => copyFileSync(path, `${path}.2`));
    recreate(h);
    assert.deepEqual(['a', 'b', 'c', 'd'].map(h.count), [10, 10, 10, 10]);
    assert.equal(h.got.length, 40);
    assert.deepEqual(h.order(), ['a', 'b', 'c', 'd']);
    assert.equal(h.skipped(), 0);
    assert.equal(h.lost(), 0);
  });

  it('negative control: a file beside the path that is no copy of what was read is still read', (t) => {
    const h = follow(t, { maxBytesPerTick: 64 * 1024 });
    // The same steps, but what lands beside the path holds other lines (a generation never at the path).
    rotateThenCopytruncate(h, (path) => writeFileSync(`${path}.2`, lines('x', 10)));
    recreate(h);
    assert.deepEqual(['a', 'b', 'c', 'd', 'x'].map(h.count), [10, 10, 10, 10, 10]);
    assert.equal(h.skipped(), 1);
  });

  it('reads what the copy holds past the point reading had reached, once, before the new lines', (t) => {
    const h = follow(t, { maxBytesPerTick: 64 * 1024 });
    writeFileSync(h.path, lines('b', 10));
    h.tail.start();
    poll(h, 4);
    // Written after the last read and before the copy: only the copy holds these 5 lines now.
    appendFileSync(h.path, lines('e', 5));
    copyFileSync(h.path, `${h.path}.1`);
    truncateSync(h.path, 0);
    appendFileSync(h.path, lines('c', 3));
    poll(h, 4);
    recreate(h);
    assert.deepEqual(['b', 'e', 'c', 'd'].map(h.count), [10, 5, 3, 10]);
    assert.deepEqual(h.order(), ['b', 'e', 'c', 'd']);
    assert.equal(h.skipped(), 0);
    assert.equal(h.lost(), 0);
  });
});
