// A file rotated in and out between two looks at the path (the follower behind, or polling) is never
// at the path when the follower looks: it is found beside the path under a rotated name, read in order
// and counted (npd_log_files_skipped_total), whether the next look found the path replaced or missing,
// and also when its inode number is one the file system freed and gave out again since the last look.
import assert from 'node:assert/strict';
import { renameSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import { FakeClock } from '../../../../src/core/clock.ts';
import { SeenFiles } from '../../../../src/sources/filelog/missed.ts';
import { createFilelogSource } from '../../../../src/sources/filelog/source.ts';
import type { FileId } from '../../../../src/sources/filelog/tail-fs.ts';
import { HOUR, logConfig, makeDeps, tempDir } from '../harness.ts';
import { follow, LINE_BYTES, lines } from './follow.ts';

/** logrotate's shuffle for `rotate 2`: .1 -> .2 (dropping the old .2), the path -> .1, a new file. */
const rotate = (path: string, next: string, n: number) => {
  renameSync(`${path}.1`, `${path}.2`);
  renameSync(path, `${path}.1`);
  if (next !== '') writeFileSync(path, lines(next, n));
};

/** Within one slice: a -> .1, b written; b -> .1 (a -> .2), and c written unless `c` is false. */
const rotateInAndOut = (c: boolean) => (path: string) => {
  renameSync(path, `${path}.1`);
  writeFileSync(path, lines('b', 50));
  rotate(path, c ? 'c' : '', 30);
};

const poll = (h: { clock: FakeClock }, times: number) => {
  for (let i = 0; i < times; i++) h.clock.advance(250);
};

describe('FileTail: a file rotated in and out between two looks at the path', () => {
  it('finds it beside the path, reads it in order and counts it', (t) => {
    const h = follow(t, { maxBytesPerTick: 5 * LINE_BYTES, at: { 3: rotateInAndOut(true) } });
    writeFileSync(`${h.path}.7`, lines('o', 5));
    writeFileSync(`${h.path}.3.gz`, 'compressed, never read');
    writeFileSync(h.path, lines('a', 100));
    h.tail.start();
    poll(h, 50);
    assert.deepEqual(['a', 'b', 'c', 'o'].map(h.count), [100, 50, 30, 0]);
    assert.deepEqual(h.order(), ['a', 'b', 'c'], 'oldest file first');
    assert.equal(h.skipped(), 1);
    assert.equal(h.lost(), 0);
  });

  it('counts a skipped file it cannot open, and its bytes as lost', (t) => {
    const h = follow(t, {
      maxBytesPerTick: 5 * LINE_BYTES,
      refuseOpen: (path) => path.endsWith('.1'),
      at: { 3: rotateInAndOut(true) },
    });
    writeFileSync(h.path, lines('a', 100));
    h.tail.start();
    poll(h, 50);
    assert.equal(h.got.length, 130);
    assert.equal(h.skipped(), 1);
    assert.equal(h.lost(), 50 * LINE_BYTES);
  });

  it('the look after it finds the path missing: read when the next file appears', (t) => {
    const h = follow(t, { maxBytesPerTick: 5 * LINE_BYTES, at: { 3: rotateInAndOut(false) } });
    writeFileSync(h.path, lines('a', 100));
    h.tail.start();
    poll(h, 1);
    writeFileSync(h.path, lines('c', 30));
    poll(h, 60);
    assert.deepEqual(['a', 'b', 'c'].map(h.count), [100, 50, 30]);
    assert.deepEqual(h.order(), ['a', 'b', 'c'], 'oldest file first');
    assert.equal(h.skipped(), 1);
  });

  it('after the path was missing longer than the grace, it is not taken for an older generation', (t) => {
    const h = follow(t, { maxBytesPerTick: 5 * LINE_BYTES });
    writeFileSync(h.path, lines('a', 10));
    h.tail.start();
    poll(h, 4);
    renameSync(h.path, `${h.path}.1`);
    // The rotated file is read to its end and closed; the follower waits for the path.
    poll(h, 12);
    writeFileSync(h.path, lines('b', 50));
    rotate(h.path, 'c', 30);
    poll(h, 60);
    assert.deepEqual(['a', 'b', 'c'].map(h.count), [10, 50, 30]);
    assert.deepEqual(h.order(), ['a', 'b', 'c']);
    assert.equal(h.skipped(), 1);
  });

  it('its inode number was freed and given out again since the last look (ext4, xfs)', async (t) => {
    let reused = false;
    const h = follow(t, {
      maxBytesPerTick: 5 * LINE_BYTES,
      at: {
        // `rotate 1`: renaming a over .1 frees o's inode, and b, created next, may get its number.
        3: (path) => {
          const o = statSync(`${path}.1`).ino;
          renameSync(path, `${path}.1`);
          writeFileSync(path, lines('b', 20));
          reused = statSync(path).ino === o;
          renameSync(path, `${path}.1`);
          writeFileSync(path, lines('c', 20));
        },
      },
    });
    // An older generation: renamed into place after its birth, as a rotation does (a later tick of the
    // file system's clock, so its change time tells its birth time apart).
    writeFileSync(`${h.path}.o`, lines('o', 5));
    await sleep(20);
    renameSync(`${h.path}.o`, `${h.path}.1`);
    writeFileSync(h.path, lines('a', 100));
    h.tail.start();
    poll(h, 80);
    if (!reused) {
      t.skip('this file system did not reuse the inode number (tmpfs never does): nothing to prove here');
      return;
    }
    assert.deepEqual(['a', 'b', 'c', 'o'].map(h.count), [100, 20, 20, 0]);
    assert.equal(h.skipped(), 1);
  });
});

describe('FileTail: files it opened are never taken for skipped ones', () => {
  it('a file opened while an older one was still read is not read again later', (t) => {
    const h = follow(t, { maxBytesPerTick: 5 * LINE_BYTES });
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
    assert.deepEqual(['a', 'b', 'c', 'd'].map(h.count), [20, 20, 20, 20]);
    assert.equal(h.skipped(), 0);
  });
});

describe('SeenFiles', () => {
  const id = (ino: bigint, born?: bigint): FileId => ({ dev: 1n, ino, size: 10, isFile: true, born });
  const at = (born?: bigint) => [{ path: '/d/app.log.1', id: id(5n, born), mtimeMs: 1 }];

  it('a seen inode number given to a new file (another birth time) is unseen', () => {
    let listed = at(100n);
    const seen = new SeenFiles('/d/app.log', () => listed);
    seen.baseline([id(6n, 200n)]);
    assert.deepEqual(seen.unseen([id(6n, 200n)]), []);
    listed = at(300n);
    assert.deepEqual(
      seen.unseen([id(7n, 400n)]).map((s) => s.id.born),
      [300n],
    );
  });

  it('without a birth time it knows (no statx, or never changed since), the inode number decides', () => {
    let listed = at();
    const seen = new SeenFiles('/d/app.log', () => listed);
    seen.baseline([id(6n)]);
    listed = at(300n);
    assert.deepEqual(seen.unseen([id(7n)]), []);
  });
});

describe('filelog source: npd_log_files_skipped_total', () => {
  it('is 0 from the start, and counts a file rotated in and out between two polls', async (t) => {
    const root = tempDir(t);
    const clock = new FakeClock(Date.UTC(2026, 0, 1));
    const deps = makeDeps(clock, root);
    const config = logConfig({
      plugin: 'filelog',
      logPath: '/app.log',
      lookbackMs: HOUR,
      pluginConfig: { timestamp: '^(\\S+)', message: '(.*)', timestampFormat: '2006' },
    });
    const source = createFilelogSource(config, deps, { watch: null, pollIntervalMs: 250 });
    t.after(() => source.stop());
    const path = join(root, 'app.log');
    writeFileSync(path, lines('a', 5));
    source.start(() => {});
    clock.advance(250);
    const series = async () =>
      (await deps.registry.metrics()).split('\n').filter((l) => l.startsWith('npd_log_files_skipped_total{'));
    assert.deepEqual(await series(), ['npd_log_files_skipped_total{source="test-monitor"} 0']);
    renameSync(path, `${path}.1`);
    writeFileSync(path, lines('b', 5));
    rotate(path, 'c', 5);
    clock.advance(250);
    assert.deepEqual(await series(), ['npd_log_files_skipped_total{source="test-monitor"} 1']);
  });
});
