// A FileTail on a real directory, driven by a fake clock, with hooks into its file-system calls so a
// test can rotate the file at an exact point while the follower is behind.
import { join } from 'node:path';
import type { TestContext } from 'node:test';
import pino from 'pino';
import { FakeClock } from '../../../../src/core/clock.ts';
import { FileTail } from '../../../../src/sources/filelog/tail.ts';
import { nodeTailFs, type TailFs } from '../../../../src/sources/filelog/tail-fs.ts';
import { tempDir } from '../harness.ts';

export const LINE_BYTES = 20;
/** Fixed-width lines `<file>-<n>-<file>`: bytes convert to lines exactly, and files differ at every offset. */
export const lines = (file: string, n: number) =>
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
export function follow(
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
  let skipped = 0;
  const tail = new FileTail({
    path,
    clock,
    logger: pino({ level: 'silent' }),
    onLines: (ls) => got.push(...ls.map((l) => l.text)),
    onLost: (bytes) => {
      lost += bytes;
    },
    onSkipped: () => {
      skipped += 1;
    },
    fs,
    ...(opts.onEvent ? { onEvent: opts.onEvent } : {}),
    watch: null,
    pollIntervalMs: 250,
    rotateGraceMs: 1000,
    maxBytesPerTick: opts.maxBytesPerTick,
  });
  t.after(() => tail.stop());
  const count = (file: string) => got.filter((l) => l.startsWith(`${file}-`)).length;
  /** The files in the order their lines arrived, each once per run of lines. */
  const order = () => got.map((l) => l.split('-')[0]).filter((c, i, all) => c !== all[i - 1]);
  return { dir, path, clock, got, tail, count, order, lost: () => lost, skipped: () => skipped };
}
