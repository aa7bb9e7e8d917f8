// Rotation while the follower is behind (each read slice smaller than the backlog): the path is checked
// for a new inode on every slice, so a file written and rotated away before the old one was read to
// its end is still opened and read to its end; what cannot be read any more (a file truncated under
// unread bytes, or more rotated files than the follower keeps open) is counted in bytes.
import assert from 'node:assert/strict';
import { appendFileSync, copyFileSync, renameSync, truncateSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { follow, LINE_BYTES, lines } from './follow.ts';

describe('FileTail behind the writer', () => {
  it('reads a file that was written and rotated away while an older one was still being read', (t) => {
    const h = follow(t, {
      maxBytesPerTick: 5 * LINE_BYTES,
      at: {
        // Rotation 1: a -> app.log.1, b is the new app.log.
        3: (path) => {
          renameSync(path, `${path}.1`);
          writeFileSync(path, lines('b', 50));
        },
        // Rotation 2 (rotate 2), still long before a is read: b -> app.log.1, c is the new app.log.
        8: (path) => {
          renameSync(`${path}.1`, `${path}.2`);
          renameSync(path, `${path}.1`);
          writeFileSync(path, lines('c', 30));
        },
      },
    });
    writeFileSync(h.path, lines('a', 100));
    h.tail.start();
    for (let i = 0; i < 50; i++) h.clock.advance(250);
    const count = (p: string) => h.got.filter((l) => l.startsWith(`${p}-`)).length;
    assert.deepEqual([count('a'), count('b'), count('c')], [100, 50, 30]);
    assert.equal(h.got.length, 180, 'nothing read twice');
    assert.equal(h.lost(), 0);
  });

  // The start of the third slice, when 10 of a's 100 lines have been read: a truncation, after a copy
  // of the file beside the path (copytruncate) or with no copy.
  const truncatedAt3 = (copy: boolean) => ({
    4: (path: string) => {
      if (copy) copyFileSync(path, `${path}.1`);
      truncateSync(path, 0);
      appendFileSync(path, lines('b', 20));
    },
  });

  it('counts the unread bytes of a file truncated under it with no copy left beside it', (t) => {
    const h = follow(t, { maxBytesPerTick: 5 * LINE_BYTES, atStat: truncatedAt3(false) });
    writeFileSync(h.path, lines('a', 100));
    h.tail.start();
    for (let i = 0; i < 50; i++) h.clock.advance(250);
    assert.equal(h.count('b'), 20, 'the new content is read from its start');
    assert.equal(h.count('a'), 10, 'a was read up to the truncation');
    assert.equal(h.lost(), 90 * LINE_BYTES);
  });

  it('copytruncate while behind: reads the rest from the copy, once, before the new content', (t) => {
    const h = follow(t, { maxBytesPerTick: 5 * LINE_BYTES, atStat: truncatedAt3(true) });
    writeFileSync(h.path, lines('a', 100));
    h.tail.start();
    for (let i = 0; i < 50; i++) h.clock.advance(250);
    assert.deepEqual([h.count('a'), h.count('b')], [100, 20]);
    assert.equal(h.got.length, 120, 'nothing read twice');
    assert.deepEqual(h.order(), ['a', 'b']);
    assert.equal(h.lost(), 0);
    assert.equal(h.skipped(), 0);
  });

  it('keeps reading rotated files that the read budget has not reached yet', (t) => {
    const rotate = (name: string) => (path: string) => {
      renameSync(path, join(path, '..', `app.log.${name}`));
      writeFileSync(path, lines(name, 40));
    };
    const h = follow(t, { maxBytesPerTick: 2 * LINE_BYTES, at: { 2: rotate('b'), 4: rotate('c') } });
    writeFileSync(h.path, lines('a', 40));
    h.tail.start();
    // Much longer than the rotate grace: files still unread must not be closed for being quiet.
    for (let i = 0; i < 200; i++) h.clock.advance(250);
    assert.equal(h.got.length, 120);
    assert.equal(h.lost(), 0);
  });
});
