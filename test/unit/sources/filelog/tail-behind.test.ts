// Rotation while the follower is behind (each read slice smaller than the backlog): the path is checked
// for a new inode on every slice, so a file written and rotated away before the old one was read to
// its end is still opened and read to its end; what cannot be read any more (a file truncated under
// unread bytes, or more rotated files than the follower keeps open) is counted in bytes.
import assert from 'node:assert/strict';
import { appendFileSync, copyFileSync, renameSync, truncateSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, it, type TestContext } from 'node:test';
import pino from 'pino';
import { FakeClock } from '../../../../src/core/clock.ts';
import { FileTail } from '../../../../src/sources/filelog/tail.ts';
import { nodeTailFs, type TailFs } from '../../../../src/sources/filelog/tail-fs.ts';
import { tempDir } from '../harness.ts';

const LINE_BYTES = 20;
/** Fixed-width lines `<file>-<n>-<file>`: bytes convert to lines exactly, and files differ at every offset. */
const lines = (file: string, n: number) =>
  Array.from(
    { length: n },
    (_, i) => `${file}-${String(i).padStart(LINE_BYTES - 2 * file.length - 3, '0')}-${file}\n`,
  ).join('');

type Hooks = Record<number, (path: string) => void>;

/**
 * A follower reading `maxBytesPerTick` per slice; `at[n]` runs just before its n-th read call and
 * `atStat[n]` before its n-th fstat (each slice starts with one), which is how a test rotates the file
 * while the follower is still behind.
 */
function follow(
  t: TestContext,
  opts: {
    maxBytesPerTick: number;
    at?: Hooks;
    atStat?: Hooks;
    onEvent?: (event: string) => void;
    refuseOpen?: (path: string) => boolean;
  },
) {
  const dir = tempDir(t);
  const path = join(dir, 'app.log');
  const real = nodeTailFs();
  let reads = 0;
  let stats = 0;
  const fs: TailFs = {
    ...real,
    openSync: (p) => {
      if (opts.refuseOpen?.(p)) throw Object.assign(new Error('refused'), { code: 'EACCES' });
      return real.openSync(p);
    },
    readSync: (fd, buffer, length, position) => {
      reads += 1;
      opts.at?.[reads]?.(path);
      return real.readSync(fd, buffer, length, position);
    },
    fstatSync: (fd) => {
      stats += 1;
      opts.atStat?.[stats]?.(path);
      return real.fstatSync(fd);
    },
  };
  const clock = new FakeClock(Date.UTC(2026, 0, 1));
  const got: string[] = [];
  let lost = 0;
  const tail = new FileTail({
    path,
    clock,
    logger: pino({ level: 'silent' }),
    onLines: (ls) => got.push(...ls.map((l) => l.text)),
    onLost: (bytes) => {
      lost += bytes;
    },
    fs,
    ...(opts.onEvent ? { onEvent: opts.onEvent } : {}),
    watch: null,
    pollIntervalMs: 250,
    rotateGraceMs: 1000,
    maxBytesPerTick: opts.maxBytesPerTick,
  });
  t.after(() => tail.stop());
  return { dir, path, clock, got, tail, lost: () => lost };
}

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

  it('counts the unread bytes of a file truncated under it (copytruncate while behind)', (t) => {
    const h = follow(t, {
      maxBytesPerTick: 5 * LINE_BYTES,
      atStat: {
        // The start of the third slice: 10 of a's 100 lines have been read.
        4: (path) => {
          copyFileSync(path, `${path}.1`);
          truncateSync(path, 0);
          appendFileSync(path, lines('b', 20));
        },
      },
    });
    writeFileSync(h.path, lines('a', 100));
    h.tail.start();
    for (let i = 0; i < 50; i++) h.clock.advance(250);
    const b = h.got.filter((l) => l.startsWith('b-')).length;
    assert.equal(b, 20, 'the new content is read from its start');
    const a = h.got.filter((l) => l.startsWith('a-')).length;
    assert.equal(a, 10, 'a was read up to the truncation');
    assert.equal(a + h.lost() / LINE_BYTES, 100, `read ${a} of a, lost ${h.lost()} bytes`);
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

/** Within one slice: a -> app.log.1, b written; then b -> app.log.1 (a -> .2), c written. */
const rotateInAndOut = (path: string) => {
  renameSync(path, `${path}.1`);
  writeFileSync(path, lines('b', 50));
  renameSync(`${path}.1`, `${path}.2`);
  renameSync(path, `${path}.1`);
  writeFileSync(path, lines('c', 30));
};

describe('FileTail: a file rotated in and out between two looks at the path', () => {
  it('finds it beside the path, reads it in order and counts it', (t) => {
    const events: string[] = [];
    const h = follow(t, {
      maxBytesPerTick: 5 * LINE_BYTES,
      onEvent: (e) => events.push(e),
      at: {
        3: rotateInAndOut,
      },
    });
    writeFileSync(`${h.path}.7`, lines('o', 5));
    writeFileSync(`${h.path}.3.gz`, 'compressed, never read');
    writeFileSync(h.path, lines('a', 100));
    h.tail.start();
    for (let i = 0; i < 50; i++) h.clock.advance(250);
    const count = (p: string) => h.got.filter((l) => l.startsWith(`${p}-`)).length;
    assert.deepEqual([count('a'), count('b'), count('c'), count('o')], [100, 50, 30, 0]);
    const order = h.got.map((l) => l[0]).filter((c, i, all) => c !== all[i - 1]);
    assert.deepEqual(order, ['a', 'b', 'c'], 'oldest file first');
    assert.deepEqual(
      events.filter((e) => e === 'missed'),
      ['missed'],
    );
    assert.equal(h.lost(), 0);
  });

  it('counts a missed file it cannot open, and its bytes as lost', (t) => {
    const events: string[] = [];
    const h = follow(t, {
      maxBytesPerTick: 5 * LINE_BYTES,
      onEvent: (e) => events.push(e),
      refuseOpen: (path) => path.endsWith('.1'),
      at: {
        3: rotateInAndOut,
      },
    });
    writeFileSync(h.path, lines('a', 100));
    h.tail.start();
    for (let i = 0; i < 50; i++) h.clock.advance(250);
    assert.equal(h.got.length, 130);
    assert.deepEqual(
      events.filter((e) => e === 'missed'),
      ['missed'],
    );
    assert.equal(h.lost(), 50 * LINE_BYTES);
  });
});

describe('FileTail: files it opened are never taken for missed ones', () => {
  it('a file opened while an older one was still read is not read again later', (t) => {
    const events: string[] = [];
    const h = follow(t, { maxBytesPerTick: 5 * LINE_BYTES, onEvent: (e) => events.push(e) });
    writeFileSync(h.path, lines('a', 20));
    h.tail.start();
    h.clock.advance(0);
    // Twice, the file is renamed away and the path stays empty for one look (the writer creates the
    // next file on its next write), so the follower opens b and c while an older file is still read.
    renameSync(h.path, `${h.path}.1`);
    h.clock.advance(250);
    writeFileSync(h.path, lines('b', 20));
    h.clock.advance(250);
    renameSync(`${h.path}.1`, `${h.path}.2`);
    renameSync(h.path, `${h.path}.1`);
    h.clock.advance(250);
    writeFileSync(h.path, lines('c', 20));
    for (let i = 0; i < 20; i++) h.clock.advance(250);
    // Then a rotation seen as a rename: c -> .1, d at the path; b is beside the path, read long ago.
    renameSync(`${h.path}.2`, `${h.path}.3`);
    renameSync(`${h.path}.1`, `${h.path}.2`);
    renameSync(h.path, `${h.path}.1`);
    writeFileSync(h.path, lines('d', 20));
    for (let i = 0; i < 20; i++) h.clock.advance(250);
    const count = (p: string) => h.got.filter((l) => l.startsWith(`${p}-`)).length;
    assert.deepEqual([count('a'), count('b'), count('c'), count('d')], [20, 20, 20, 20]);
    assert.deepEqual(
      events.filter((e) => e === 'missed'),
      [],
    );
  });
});
