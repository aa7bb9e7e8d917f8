import type { ChildProcess, SpawnOptions } from 'node:child_process';
import { backoffMs } from '../../core/backoff.ts';
import type { Clock, TimerHandle } from '../../core/clock.ts';
import type { Logger } from '../../core/logger.ts';
import type { MonitorHealth } from '../../core/types.ts';
import { LineSplitter, type SplitLine } from '../lines.ts';

export type SpawnFn = (command: string, args: readonly string[], options: SpawnOptions) => ChildProcess;

export interface JournalFollowerOptions {
  readonly clock: Clock;
  readonly logger: Logger;
  readonly spawn: SpawnFn;
  readonly command: string;
  readonly env: NodeJS.ProcessEnv;
  /** Called before every run so the cursor and directory are current; a string says why not to run. */
  readonly args: () => readonly string[] | string;
  /** Complete stdout lines, once per chunk read. */
  readonly onLines: (lines: readonly SplitLine[]) => void;
  /** Counts each retry or restart (npd_journal_restarts_total). */
  readonly onRestart: () => void;
  readonly maxLineBytes: number;
  readonly killTimeoutMs: number;
}

const RETRY_INITIAL_MS = 1000;
const RETRY_MAX_MS = 30_000;
/** A child that ran this long was healthy, so its exit starts the backoff again from the bottom. */
const RESET_AFTER_MS = 60_000;
const STDERR_TAIL_CHARS = 1024;

interface Run {
  readonly child: ChildProcess;
  readonly startedAt: number;
  readonly closed: Promise<void>;
  finish: () => void;
  stderr: string;
}

/**
 * Keeps one `journalctl --follow` child running: restarts it with backoff when it exits, recycles it on
 * request, and on stop sends SIGTERM, then SIGKILL, and waits for it to be reaped.
 */
export class JournalFollower {
  private readonly opts: JournalFollowerOptions;
  private run: Run | undefined;
  private timer: TimerHandle | undefined;
  private running = false;
  private recycling = false;
  private failures = 0;
  private detail = 'not started';
  private spawned = false;

  constructor(opts: JournalFollowerOptions) {
    this.opts = opts;
  }

  start(): void {
    if (this.running) return;
    this.running = true;
    this.launch();
  }

  async stop(): Promise<void> {
    this.running = false;
    this.timer?.cancel();
    this.timer = undefined;
    this.detail = 'stopped';
    const run = this.run;
    if (!run) return;
    await this.kill(run);
    if (this.run === run) this.run = undefined;
  }

  /** Restarts the child at once, without backoff (e.g. the journal directory changed). */
  recycle(): void {
    if (!this.run || this.recycling) return;
    this.recycling = true;
    this.run.child.kill('SIGTERM');
  }

  health(): MonitorHealth {
    if (this.running && this.run && this.spawned) return { up: true, healthy: true };
    return { up: this.running, healthy: false, detail: this.detail };
  }

  /** The running child's pid, for tests and logs. */
  pid(): number | undefined {
    return this.run?.child.pid;
  }

  private launch(): void {
    this.timer = undefined;
    if (!this.running) return;
    const args = this.opts.args();
    if (typeof args === 'string') {
      this.retry(args);
      return;
    }
    let child: ChildProcess;
    try {
      child = this.opts.spawn(this.opts.command, args, {
        stdio: ['ignore', 'pipe', 'pipe'],
        env: this.opts.env,
      });
    } catch (err) {
      this.retry(`spawn ${this.opts.command}: ${(err as Error).message}`);
      return;
    }
    this.attach(child);
  }

  private attach(child: ChildProcess): void {
    let finish = () => {};
    const closed = new Promise<void>((resolve) => {
      finish = resolve;
    });
    const run: Run = { child, startedAt: this.opts.clock.now(), closed, finish, stderr: '' };
    this.run = run;
    this.spawned = false;
    const splitter = new LineSplitter(this.opts.maxLineBytes);
    child.once('spawn', () => {
      if (this.run === run) this.spawned = true;
    });
    child.stdout?.on('data', (chunk: Buffer) => this.onData(run, splitter, chunk));
    child.stderr?.on('data', (chunk: Buffer) => {
      run.stderr = (run.stderr + chunk.toString('utf8')).slice(-STDERR_TAIL_CHARS);
    });
    child.on('error', (err) => {
      run.stderr = `${run.stderr}\n${err.message}`.slice(-STDERR_TAIL_CHARS);
      // A child that never started emits no 'close' in some cases (EMFILE), so finish here.
      if (child.pid === undefined) this.onClose(run, `spawn failed: ${err.message}`);
    });
    child.once('close', (code, signal) => this.onClose(run, `exited with ${code ?? signal}`));
  }

  private onData(run: Run, splitter: LineSplitter, chunk: Buffer): void {
    if (!this.running || this.run !== run) return;
    const lines: SplitLine[] = [];
    splitter.push(chunk, lines);
    if (lines.length > 0) this.opts.onLines(lines);
  }

  private onClose(run: Run, how: string): void {
    run.finish();
    if (this.run !== run) return;
    this.run = undefined;
    this.spawned = false;
    // An incomplete last line is dropped on purpose: its entry is read again after the cursor.
    if (!this.running) return;
    if (this.recycling) {
      this.recycling = false;
      this.opts.onRestart();
      this.detail = 'restarting journalctl';
      this.timer = this.opts.clock.setTimeout(() => this.launch(), 0);
      return;
    }
    if (this.opts.clock.now() - run.startedAt >= RESET_AFTER_MS) this.failures = 0;
    const stderr = run.stderr.trim().split('\n').slice(-3).join(' | ');
    this.retry(`${this.opts.command} ${how}${stderr ? `: ${stderr}` : ''}`);
  }

  private retry(detail: string): void {
    this.detail = detail;
    this.failures += 1;
    const delayMs = backoffMs(this.failures, RETRY_INITIAL_MS, RETRY_MAX_MS);
    this.opts.onRestart();
    this.opts.logger.warn({ detail, delayMs, failures: this.failures }, 'journal reader down; retrying');
    this.timer = this.opts.clock.setTimeout(() => this.launch(), delayMs);
  }

  private async kill(run: Run): Promise<void> {
    const { child } = run;
    const clock = this.opts.clock;
    const wait = (ms: number) =>
      new Promise<boolean>((resolve) => {
        const t = clock.setTimeout(() => resolve(false), ms);
        void run.closed.then(() => {
          t.cancel();
          resolve(true);
        });
      });
    child.kill('SIGTERM');
    if (await wait(this.opts.killTimeoutMs)) return;
    this.opts.logger.warn({ pid: child.pid }, 'journalctl ignored SIGTERM; sending SIGKILL');
    child.kill('SIGKILL');
    if (await wait(this.opts.killTimeoutMs)) return;
    // The process is gone but a grandchild still holds the pipes; stop waiting for them to close.
    child.stdout?.destroy();
    child.stderr?.destroy();
  }
}
