import type { ChildProcess, SpawnOptions } from 'node:child_process';
import type { Clock, TimerHandle } from '../../core/clock.ts';
import { truncateUtf8 } from '../../core/utf8.ts';
import { goQuote } from '../../gocompat/go-quote.ts';
import { goTrimSpace } from '../../gocompat/strings.ts';
import type { ProbeStatus } from '../../rules/probe-engine.ts';
import { CappedCapture, processState } from './output.ts';

export type SpawnFn = (command: string, args: readonly string[], options: SpawnOptions) => ChildProcess;
export type KillFn = (pid: number, signal: NodeJS.Signals) => void;

export interface PluginCommand {
  /** As configured; it is what NPD quotes in the timeout message. */
  readonly path: string;
  readonly command: string;
  readonly args: readonly string[];
  readonly timeoutMs: number;
  readonly maxOutputLength: number;
}

/** Why a run produced no protocol answer: it could not start, ran too long, or the monitor stopped. */
export type PluginFailure = 'start' | 'timeout' | 'aborted';

export interface PluginOutcome {
  readonly status: ProbeStatus;
  /** The condition/event message: trimmed stdout cut to max_output_length bytes, or NPD's failure text. */
  readonly message: string;
  readonly failure?: PluginFailure | undefined;
  /** What went wrong starting it (errno code and text), for the log only. */
  readonly error?: string | undefined;
  /** Go's ProcessState text: `exit status 1`, `signal: killed`, or `<nil>` if it never exited. */
  readonly state: string;
  readonly stdoutTruncated: boolean;
  readonly stderrTruncated: boolean;
  readonly stderr: string;
  /** The process group outlived SIGKILL by the grace period (D state, or a member left the group). */
  readonly abandoned: boolean;
  /** Reading stdout or stderr failed; what was read before still counts. */
  readonly pipeError?: boolean | undefined;
  readonly durationMs: number;
}

export type PluginExecutor = (command: PluginCommand, signal?: AbortSignal) => Promise<PluginOutcome>;

export interface ExecutorDeps {
  readonly spawn: SpawnFn;
  /** process.kill; a negative pid signals the whole process group. */
  readonly kill: KillFn;
  readonly clock: Clock;
  /** How long to wait for the pipes to close after SIGKILL before giving up on the process. */
  readonly killGraceMs?: number;
}

export const START_FAILURE_MESSAGE = 'Error in starting plugin. Please check the error log';
const DEFAULT_KILL_GRACE_MS = 2000;

/**
 * Runs plugins the way NPD does (npd.md §2.2): no shell, inherited environment, stdin from /dev/null,
 * the child in its own process group so a timeout can SIGKILL everything it forked (`detached: true`
 * makes it a session leader, which NPD's Setpgid also achieves for our purpose). The one addition is a
 * hard deadline after the kill: a process stuck in D state (#1050) cannot hold the rule's group forever.
 */
export function createPluginExecutor(deps: ExecutorDeps): PluginExecutor {
  return (command, signal) => new Promise((resolve) => new PluginRun(command, deps, resolve).start(signal));
}

class PluginRun {
  private readonly command: PluginCommand;
  private readonly deps: ExecutorDeps;
  private readonly resolve: (outcome: PluginOutcome) => void;
  private readonly stdout = new CappedCapture();
  private readonly stderr = new CappedCapture();
  private readonly startedNs: bigint;
  private child: ChildProcess | undefined;
  private signal: AbortSignal | undefined;
  private exit: { code: number | null; signal: string | null } | undefined;
  private failure: PluginFailure | undefined;
  private error: string | undefined;
  private timer: TimerHandle | undefined;
  private pipeError = false;
  private done = false;

  constructor(command: PluginCommand, deps: ExecutorDeps, resolve: (outcome: PluginOutcome) => void) {
    this.command = command;
    this.deps = deps;
    this.resolve = resolve;
    this.startedNs = deps.clock.hrtime();
  }

  start(signal: AbortSignal | undefined): void {
    if (signal?.aborted) {
      this.failure = 'aborted';
      this.finish(false);
      return;
    }
    try {
      this.child = this.deps.spawn(this.command.command, this.command.args, {
        detached: true,
        stdio: ['ignore', 'pipe', 'pipe'],
      });
    } catch (err) {
      this.startFailed(err as Error);
      return;
    }
    this.watch(this.child);
    this.signal = signal;
    signal?.addEventListener('abort', this.onAbort, { once: true });
    this.timer = this.deps.clock.setTimeout(() => this.kill('timeout'), this.command.timeoutMs);
  }

  private watch(child: ChildProcess): void {
    child.stdout?.on('data', (chunk: Buffer) => this.stdout.write(chunk));
    child.stderr?.on('data', (chunk: Buffer) => this.stderr.write(chunk));
    // A pipe error must not crash the agent; the run still ends through 'close' or the deadline.
    const onPipeError = () => {
      this.pipeError = true;
    };
    child.stdout?.on('error', onPipeError);
    child.stderr?.on('error', onPipeError);
    child.on('error', (err) => {
      if (child.pid === undefined) this.startFailed(err);
    });
    child.once('exit', (code, sig) => {
      this.exit = { code, signal: sig };
    });
    child.once('close', () => this.finish(false));
  }

  private readonly onAbort = (): void => this.kill('aborted');

  private startFailed(err: Error): void {
    const code = (err as NodeJS.ErrnoException).code;
    this.failure = 'start';
    this.error = code ? `${code}: ${err.message}` : err.message;
    this.finish(false);
  }

  private kill(reason: 'timeout' | 'aborted'): void {
    if (this.done || this.failure) return;
    this.failure = reason;
    const pid = this.child?.pid;
    if (pid !== undefined) {
      try {
        this.deps.kill(-pid, 'SIGKILL');
      } catch {
        // ESRCH: the group is already empty; its pipes close on their own.
      }
    }
    this.timer = this.deps.clock.setTimeout(
      () => this.abandon(),
      this.deps.killGraceMs ?? DEFAULT_KILL_GRACE_MS,
    );
  }

  /** Closes our ends of the pipes so their fds are freed even though the process may linger. */
  private abandon(): void {
    this.child?.stdout?.destroy();
    this.child?.stderr?.destroy();
    this.child?.unref();
    this.finish(true);
  }

  private finish(abandoned: boolean): void {
    if (this.done) return;
    this.done = true;
    this.timer?.cancel();
    this.signal?.removeEventListener('abort', this.onAbort);
    const durationMs = Number(this.deps.clock.hrtime() - this.startedNs) / 1e6;
    this.resolve(this.outcome(abandoned, durationMs));
  }

  private outcome(abandoned: boolean, durationMs: number): PluginOutcome {
    const max = this.command.maxOutputLength;
    const output = goTrimSpace(this.stdout.text());
    const cut = truncateUtf8(output, max);
    const state = processState(this.exit);
    const common = {
      state,
      stdoutTruncated: this.stdout.overflowed || cut.truncated,
      stderrTruncated: this.stderr.overflowed,
      stderr: this.stderr.text(),
      abandoned,
      pipeError: this.pipeError,
      durationMs,
    };
    if (this.failure === 'start') {
      return {
        ...common,
        status: 'Unknown',
        message: START_FAILURE_MESSAGE,
        failure: 'start',
        error: this.error,
      };
    }
    if (this.failure === 'aborted') {
      return {
        ...common,
        status: 'Unknown',
        message: 'Plugin run cancelled: the monitor is stopping',
        failure: 'aborted',
      };
    }
    if (this.failure === 'timeout') {
      // Like NPD, the timeout text itself is subject to max_output_length.
      const text = `Timeout when running plugin ${goQuote(this.command.path)}: state - ${state}. output - ${goQuote(output)}`;
      return { ...common, status: 'Unknown', message: truncateUtf8(text, max).text, failure: this.failure };
    }
    return { ...common, status: exitStatus(this.exit), message: cut.text };
  }
}

/** NPD's protocol: 0 is OK, 1 is NonOK, any other code or death by a signal is Unknown. */
function exitStatus(exit: { code: number | null; signal: string | null } | undefined): ProbeStatus {
  if (exit?.code === 0) return 'OK';
  if (exit?.code === 1) return 'NonOK';
  return 'Unknown';
}
