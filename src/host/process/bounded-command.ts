import { type ChildProcess, type SpawnOptions, spawn } from 'node:child_process';
import type { Clock } from '../../core/clock.ts';

export interface BoundedOutput {
  readonly stdout: string;
  /** The output reached maxBytes and the process was stopped there. */
  readonly truncated: boolean;
  readonly timedOut: boolean;
  /** Exit code; null when killed, undefined when the command could not be started. */
  readonly code: number | null | undefined;
  readonly error?: string;
  readonly stderr: string;
}

export interface BoundedCommand {
  readonly command: string;
  readonly args: readonly string[];
  readonly maxBytes: number;
  readonly timeoutMs: number;
  /** head (default): stop the process at maxBytes. tail: read to the end, keep the newest maxBytes. */
  readonly keep?: 'head' | 'tail';
}

export type SpawnFn = (command: string, args: readonly string[], options: SpawnOptions) => ChildProcess;

/** How long to keep stderr: enough for a reason, never a flood. */
const STDERR_BYTES = 2048;

/**
 * Runs a command with an empty environment (nothing of ours can leak into its output) and keeps at most
 * maxBytes of its stdout: the process is killed when it outgrows that or the deadline.
 */
export function runBounded(
  cmd: BoundedCommand,
  clock: Clock,
  spawnFn: SpawnFn = spawn,
): Promise<BoundedOutput> {
  return new Promise((resolve) => {
    const child = spawnFn(cmd.command, cmd.args, {
      env: { LANG: 'C.UTF-8' },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let timedOut = false;
    // A grandchild may hold the pipes open after the kill: closing our ends ends the wait regardless.
    const stop = () => {
      child.kill('SIGKILL');
      child.stdout?.destroy();
      child.stderr?.destroy();
    };
    const timer = clock.setTimeout(() => {
      timedOut = true;
      stop();
    }, cmd.timeoutMs);
    const stdout = new Output(cmd.maxBytes, cmd.keep ?? 'head', stop);
    let stderr = '';
    child.stdout?.on('data', (chunk: Buffer) => stdout.add(chunk));
    child.stderr?.on('data', (chunk: Buffer) => {
      if (stderr.length < STDERR_BYTES) stderr += chunk.toString('utf8').slice(0, STDERR_BYTES);
    });
    const finish = (code: number | null | undefined, error?: string) => {
      timer.cancel();
      const { truncated } = stdout;
      resolve({ stdout: stdout.text(), truncated, timedOut, code, stderr, ...(error ? { error } : {}) });
    };
    child.on('error', (err) => finish(undefined, err.message));
    child.on('close', (code) => finish(code));
  });
}

/** Stdout within maxBytes: the first bytes (then `onFull` stops the command) or the newest ones. */
class Output {
  private readonly chunks: Buffer[] = [];
  private size = 0;
  private readonly maxBytes: number;
  private readonly keep: 'head' | 'tail';
  private readonly onFull: () => void;
  truncated = false;

  constructor(maxBytes: number, keep: 'head' | 'tail', onFull: () => void) {
    this.maxBytes = maxBytes;
    this.keep = keep;
    this.onFull = onFull;
  }

  add(chunk: Buffer): void {
    this.chunks.push(chunk);
    this.size += chunk.length;
    if (this.size <= this.maxBytes) return;
    this.truncated = true;
    if (this.keep === 'tail') this.size = dropOldest(this.chunks, this.size - this.maxBytes);
    else this.onFull();
  }

  text(): string {
    const all = Buffer.concat(this.chunks);
    const start = this.keep === 'tail' ? Math.max(0, all.length - this.maxBytes) : 0;
    return all.subarray(start, start + this.maxBytes).toString('utf8');
  }
}

/** Drops whole chunks from the front while more than `excess` bytes would remain; returns the new size. */
function dropOldest(chunks: Buffer[], excess: number): number {
  let dropped = 0;
  while (chunks.length > 1 && dropped + (chunks[0] as Buffer).length <= excess)
    dropped += (chunks.shift() as Buffer).length;
  return chunks.reduce((n, c) => n + c.length, 0);
}
