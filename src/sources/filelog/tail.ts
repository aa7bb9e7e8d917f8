import { basename, dirname } from 'node:path';
import { backoffMs } from '../../core/backoff.ts';
import type { TimerHandle } from '../../core/clock.ts';
import type { MonitorHealth } from '../../core/types.ts';
import { LineSplitter, type SplitLine } from '../lines.ts';
import { grownHead, rewritten } from './copytruncate.ts';
import { SkippedFiles } from './missed.ts';
import { type OpenFile, openedFile, RotatedFiles } from './rotated.ts';
import { type FileId, nodeTailFs, nodeWatch, sameFile, type TailFs } from './tail-fs.ts';
import type { FileTailOptions } from './tail-options.ts';

export type { FileTailOptions, TailEvent } from './tail-options.ts';

const RETRY_INITIAL_MS = 1000;
const RETRY_MAX_MS = 30_000;
const SIGNATURE_BYTES = 16;
const READ_CHUNK = 64 * 1024;
const DEFAULT_SLICE_BYTES = 256 * 1024;

/**
 * `tail -F` without losing lines: follows the path by inode, reads from the last offset, drains a
 * rotated file until it goes quiet, restarts at 0 on truncation (copytruncate; its copy beside the
 * path is read on from where reading stopped, never again from its start), waits for a missing file,
 * and holds a half-written last line until its newline. The path is checked for a new inode
 * before every read slice, also while behind, so a file rotated away before its predecessor was read
 * to its end is still opened and read, and one rotated in and out between two looks is found beside
 * it. fs.watch only speeds things up; polling every `pollIntervalMs` is what guarantees progress.
 */
export class FileTail {
  private readonly opts: FileTailOptions;
  private readonly fs: TailFs;
  private readonly buffer = Buffer.alloc(READ_CHUNK);
  private current: OpenFile | undefined;
  private readonly rotated: RotatedFiles;
  private readonly skipped: SkippedFiles | undefined;
  private timer: TimerHandle | undefined;
  private timerDue = 0;
  private watcher: { close(): void } | undefined;
  private running = false;
  private detail = 'not started';
  private failures = 0;
  /** Where reading stopped when the fd was closed after an error, to resume the same file there. */
  private resume: Pick<OpenFile, 'id' | 'offset' | 'tail' | 'head' | 'splitter'> | undefined;

  constructor(opts: FileTailOptions) {
    this.opts = opts;
    this.fs = opts.fs ?? nodeTailFs();
    this.rotated = new RotatedFiles({
      fs: this.fs,
      clock: opts.clock,
      logger: opts.logger,
      graceMs: opts.rotateGraceMs ?? 5000,
      read: (f, lines, budget) => this.readAvailable(f, lines, budget),
      close: (f) => this.close(f),
      onLost: (bytes) => opts.onLost?.(bytes),
    });
    const list = this.fs.listFiles?.bind(this.fs);
    const add = (f: OpenFile) => this.rotated.add(f);
    const splitter = () => this.splitter();
    this.skipped = list ? new SkippedFiles({ ...opts, fs: this.fs, list, add, splitter }) : undefined;
  }

  start(): void {
    if (this.running) return;
    this.running = true;
    this.schedule(0);
  }

  stop(): void {
    this.running = false;
    this.timer?.cancel();
    this.timer = undefined;
    this.watcher?.close();
    this.watcher = undefined;
    this.rotated.closeAll();
    this.skipped?.reset();
    if (this.current) this.close(this.current);
    this.current = undefined;
    this.detail = 'stopped';
  }

  health(): MonitorHealth {
    if (this.running && this.current && this.failures === 0) return { up: true, healthy: true };
    return { up: this.running, healthy: false, detail: this.detail };
  }

  private tick(): void {
    this.timer = undefined;
    if (!this.running) return;
    const lines: SplitLine[] = [];
    // Small slices: the path is checked for rotation once per slice, and while behind a slice of
    // 4 MiB took over a second to match, long enough for two rotations to go by unseen.
    let budget = this.opts.maxBytesPerTick ?? DEFAULT_SLICE_BYTES;
    budget = this.rotated.drain(lines, budget);
    let delay = this.opts.pollIntervalMs ?? 250;
    try {
      // Files found skipped (e.g. while the path was missing) are older than the new one: read them first.
      if (!this.current && this.open() > 0) budget = 0;
      else if (this.current) budget = this.follow(this.current, lines, budget);
      this.failures = 0;
    } catch (err) {
      delay = this.fail(err as NodeJS.ErrnoException);
    }
    if (lines.length > 0) this.opts.onLines(lines);
    if (this.running) this.schedule(budget <= 0 ? 0 : delay);
  }

  /**
   * Opens the path; a missing file is a normal state (waiting), not an error. Returns how many files
   * rotated in and out before this look it found (queued on the rotated set).
   */
  private open(): number {
    let fd: number;
    try {
      fd = this.fs.openSync(this.opts.path);
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'ENOENT') throw err;
      this.detail = `waiting for ${this.opts.path}: it does not exist`;
      return 0;
    }
    let id: FileId;
    try {
      id = this.fs.fstatSync(fd);
      if (!id.isFile) throw new Error(`${this.opts.path} is not a regular file`);
    } catch (err) {
      this.fs.closeSync(fd);
      throw err;
    }
    const r =
      this.resume && sameFile(this.resume.id, id) && id.size >= this.resume.offset ? this.resume : undefined;
    this.resume = undefined;
    const splitter = r?.splitter ?? this.splitter();
    this.current = openedFile(fd, id, this.opts.clock.now(), splitter, r);
    this.ensureWatch();
    return this.skipped?.opened(id, this.rotated.ids, r !== undefined) ?? 0;
  }

  /**
   * Checks the open file for truncation and the path for rotation or deletion, then reads. A rotated
   * file is read (first, and to its end) by the rotated set; the new one is opened at once.
   */
  private follow(f: OpenFile, lines: SplitLine[], budget: number): number {
    if (rewritten(this.fs, f) && this.restartAtZero(f, lines)) return 0;
    let now: FileId | undefined;
    try {
      now = this.fs.statSync(this.opts.path);
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'ENOENT') throw err;
    }
    if (now && sameFile(now, f.id)) return this.readAvailable(f, lines, budget);
    this.opts.onEvent?.(now ? 'rename' : 'delete');
    this.opts.logger.info(
      { path: this.opts.path, rotated: now !== undefined },
      'log file rotated; reading both',
    );
    this.rotated.add(f);
    this.current = undefined;
    const left = this.readAvailable(f, lines, budget);
    if (!now) {
      this.detail = `waiting for ${this.opts.path}: it does not exist`;
      return left;
    }
    // Files rotated past unseen are older than the new one: read them first, on the next slice.
    if (this.open() > 0) return 0;
    return this.current && left > 0 ? this.readAvailable(this.current, lines, left) : left;
  }

  private splitter(): LineSplitter {
    return new LineSplitter(this.opts.maxLineBytes ?? 64 * 1024);
  }

  private readAvailable(f: OpenFile, lines: SplitLine[], budget: number): number {
    let left = budget;
    while (left > 0) {
      const n = this.fs.readSync(f.fd, this.buffer, Math.min(READ_CHUNK, left), f.offset);
      f.atEof = n === 0;
      if (n === 0) break;
      const chunk = this.buffer.subarray(0, n);
      f.splitter.push(chunk, lines);
      const joined = n >= SIGNATURE_BYTES ? chunk : Buffer.concat([f.tail, chunk]);
      f.tail = Buffer.from(joined.subarray(Math.max(0, joined.length - SIGNATURE_BYTES)));
      f.head = grownHead(f.head, f.offset, chunk);
      f.offset += n;
      f.size = Math.max(f.size, f.offset);
      left -= n;
      f.lastDataAt = this.opts.clock.now();
    }
    return left;
  }

  /**
   * Returns whether a copy of the file (copytruncate's) holding bytes not read yet was queued: it is
   * older than what the path holds now, so it is read first, on the next slice.
   */
  private restartAtZero(f: OpenFile, lines: SplitLine[]): boolean {
    this.opts.onEvent?.('truncate');
    this.opts.logger.info(
      { path: this.opts.path, offset: f.offset },
      'log file truncated; reading from the start',
    );
    // Its copy is no file rotated past unseen (it holds lines read already); read on where we stopped.
    const copy = this.skipped?.copyOf(f, [...this.rotated.ids, f.id], f.splitter);
    const queued = copy !== undefined && copy.id.size > f.offset;
    if (queued) {
      this.rotated.add(copy);
      f.splitter = this.splitter();
    } else if (copy) this.close(copy);
    // What was there past our offset when we last looked, and is in no copy, is gone unread.
    const lost = f.size - Math.max(f.offset, copy?.id.size ?? 0);
    if (lost > 0) {
      this.opts.onLost?.(lost);
      this.opts.logger.warn({ path: this.opts.path, bytes: lost }, 'log file truncated before it was read');
      // The rest of a pending half line was among the lost bytes: deliver the head as it is.
      const partial = f.splitter.flush();
      if (partial) lines.push(partial);
    }
    // Otherwise a pending half line stays: the writer finishes it at the new start of the file.
    f.offset = 0;
    f.size = 0;
    f.tail = Buffer.alloc(0);
    f.head = Buffer.alloc(0);
    return queued;
  }

  /** Closes the file (remembering where it stopped) and returns the backoff delay. */
  private fail(err: NodeJS.ErrnoException): number {
    const f = this.current;
    this.opts.onEvent?.(f ? 'read_error' : 'open_error');
    if (f) {
      this.resume = { id: f.id, offset: f.offset, tail: f.tail, head: f.head, splitter: f.splitter };
      this.close(f);
      this.current = undefined;
    }
    this.failures += 1;
    this.detail = `${this.opts.path}: ${err.message}`;
    const delayMs = backoffMs(this.failures, RETRY_INITIAL_MS, RETRY_MAX_MS);
    this.opts.logger.warn({ err: err.message, delayMs }, 'following log file failed; retrying');
    return delayMs;
  }

  private ensureWatch(): void {
    const watch = this.opts.watch === undefined ? nodeWatch() : this.opts.watch;
    if (!watch || this.watcher) return;
    const name = basename(this.opts.path);
    const onError = (err: Error) => {
      this.opts.onEvent?.('watch_error');
      this.opts.logger.warn({ err: err.message }, 'watching the log directory failed; polling only');
      this.watcher?.close();
      this.watcher = undefined;
    };
    try {
      this.watcher = watch(
        dirname(this.opts.path),
        // Events name the rotated file too, so any event counts while one is being drained.
        (changed) => {
          if (changed === null || changed === name || this.rotated.count > 0) this.wake();
        },
        onError,
      );
    } catch (err) {
      onError(err as Error);
    }
  }

  /** Reads soon after a change; the short delay folds a burst of writes into one read. */
  private wake(): void {
    // During a retry backoff, changes wait for the backoff.
    if (!this.running || this.failures > 0) return;
    const soon = this.opts.clock.now() + 10;
    if (this.timer && this.timerDue <= soon) return;
    this.schedule(10);
  }

  private schedule(ms: number): void {
    this.timer?.cancel();
    this.timerDue = this.opts.clock.now() + ms;
    this.timer = this.opts.clock.setTimeout(() => this.tick(), ms);
  }

  private close(f: OpenFile): void {
    try {
      this.fs.closeSync(f.fd);
    } catch (err) {
      this.opts.logger.debug({ err }, 'closing log file failed');
    }
  }
}
