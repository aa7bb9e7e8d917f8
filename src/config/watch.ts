import { createHash } from 'node:crypto';
import { type FSWatcher, watch } from 'node:fs';
import { dirname } from 'node:path';
import type { Clock, TimerHandle } from '../core/clock.ts';
import { readConfigFile } from './load.ts';

export interface ConfigWatcherOptions {
  readonly files: readonly string[];
  readonly clock: Clock;
  readonly intervalMs: number;
  readonly onChange: () => void;
  readonly read?: (file: string) => string;
  /** Directory watches only make a change noticed sooner; polling alone is enough. */
  readonly watchDirs?: boolean;
}

/**
 * Notices config changes, including a ConfigMap's atomic `..data` symlink swap, which replaces every
 * file at once without touching the path a file watch would hold. It compares content hashes on a
 * poll (cheap for a handful of small files) and uses directory watches only to poll sooner.
 */
export class ConfigWatcher {
  private readonly opts: ConfigWatcherOptions;
  private readonly watchers: FSWatcher[] = [];
  private timer: TimerHandle | undefined;
  private soon: TimerHandle | undefined;
  private last: string;
  private running = false;

  constructor(opts: ConfigWatcherOptions) {
    this.opts = opts;
    this.last = this.fingerprint();
  }

  start(): void {
    this.running = true;
    this.schedule();
    if (this.opts.watchDirs === false) return;
    for (const dir of new Set(this.opts.files.map((f) => dirname(f)))) {
      try {
        const w = watch(dir, () => this.checkSoon());
        w.on('error', () => w.close());
        w.unref();
        this.watchers.push(w);
      } catch {
        // Polling still notices the change.
      }
    }
  }

  stop(): void {
    this.running = false;
    this.timer?.cancel();
    this.soon?.cancel();
    for (const w of this.watchers.splice(0)) w.close();
  }

  /** Compares now; exposed so tests and the poll share one path. */
  check(): void {
    const now = this.fingerprint();
    if (now === this.last) return;
    this.last = now;
    this.opts.onChange();
  }

  private checkSoon(): void {
    this.soon?.cancel();
    // Writers and the kubelet's symlink swap take a few steps; settle before reading.
    this.soon = this.opts.clock.setTimeout(() => this.check(), 200);
  }

  private schedule(): void {
    this.timer = this.opts.clock.setTimeout(() => {
      this.check();
      if (this.running) this.schedule();
    }, this.opts.intervalMs);
  }

  private fingerprint(): string {
    // The loader's bounded read: a path swapped to /dev/zero or a FIFO must not hang the poll either.
    const read = this.opts.read ?? readConfigFile;
    const hash = createHash('sha256');
    for (const file of this.opts.files) {
      try {
        hash.update(`${file}\0${read(file)}\0`);
      } catch (err) {
        // The message, not just the code: a swap from /dev/zero to a FIFO is a change too.
        hash.update(`${file}\0!${(err as Error).message}\0`);
      }
    }
    return hash.digest('hex');
  }
}
