/**
 * Child processes for the harness: short commands (run) and the long-lived etcd / kube-apiserver,
 * each in its own process group so that stopping (or this process dying) leaves no strays.
 */
import { type ChildProcess, execFile, spawn } from 'node:child_process';
import * as fs from 'node:fs';
import * as net from 'node:net';
import * as path from 'node:path';
import type { KubectlResult } from './types.ts';

export interface RunOptions {
  timeoutMs?: number;
  env?: NodeJS.ProcessEnv;
  input?: string;
  onStderr?: ((line: string) => void) | undefined;
}

export function run(cmd: string, args: string[], opts: RunOptions = {}): Promise<KubectlResult> {
  return new Promise((resolve, reject) => {
    const child = execFile(
      cmd,
      args,
      {
        env: opts.env,
        timeout: opts.timeoutMs ?? 60_000,
        killSignal: 'SIGKILL',
        maxBuffer: 64 * 1024 * 1024,
        encoding: 'utf8',
      },
      (err, stdout, stderr) => {
        if (err && typeof err.code !== 'number') {
          reject(new Error(`${cmd} ${args.join(' ')}: ${err.message}\n${tail(stderr, 20)}`));
          return;
        }
        resolve({ code: err ? Number(err.code) : 0, stdout, stderr });
      },
    );
    if (opts.onStderr) {
      const onStderr = opts.onStderr;
      child.stderr?.on('data', (d: Buffer | string) => {
        for (const l of String(d).split('\n')) if (l.trim()) onStderr(l);
      });
    }
    // A command that exits before reading its input makes the write fail with EPIPE: its exit status
    // (in the callback) is the answer, not the pipe.
    child.stdin?.on('error', () => {});
    child.stdin?.end(opts.input ?? '');
  });
}

export function tail(text: string, lines: number): string {
  return text.split('\n').slice(-lines).join('\n');
}

export function readTail(file: string, lines: number): string {
  try {
    return tail(fs.readFileSync(file, 'utf8'), lines);
  } catch {
    return '(no log)';
  }
}

export const sleep = (ms: number) => new Promise<void>((r) => setTimeout(r, ms));

/** A free TCP port on 127.0.0.1 (bound, then released). */
export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const srv = net.createServer();
    srv.unref();
    srv.on('error', reject);
    srv.listen(0, '127.0.0.1', () => {
      const addr = srv.address();
      srv.close(() => {
        if (addr && typeof addr === 'object') resolve(addr.port);
        else reject(new Error('no port'));
      });
    });
  });
}

export async function freePorts(n: number): Promise<number[]> {
  const ports = new Set<number>();
  while (ports.size < n) ports.add(await freePort());
  return [...ports];
}

/**
 * Whether a process of the group is still running. Zombies do not count: orphans are reaped by this
 * machine's init only about once a second, and a zombie holds no port, file or memory.
 */
export function processGroupAlive(pgid: number): boolean {
  try {
    process.kill(-pgid, 0);
  } catch (e) {
    return (e as NodeJS.ErrnoException).code === 'EPERM';
  }
  let pids: string[];
  try {
    pids = fs.readdirSync('/proc').filter((d) => /^\d+$/.test(d));
  } catch {
    return true;
  }
  for (const pid of pids) {
    let stat: string;
    try {
      stat = fs.readFileSync(`/proc/${pid}/stat`, 'utf8');
    } catch {
      continue;
    }
    // pid (comm) state ppid pgrp ...; comm may hold spaces and parentheses.
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    if (Number(fields[2]) === pgid && fields[0] !== 'Z' && fields[0] !== 'X') return true;
  }
  return false;
}

function signalGroup(pgid: number, signal: NodeJS.Signals): void {
  try {
    process.kill(-pgid, signal);
  } catch {
    // already gone
  }
}

// Every live process group, killed synchronously if this process exits without stop().
const liveGroups = new Set<number>();
let exitHookInstalled = false;
function installExitHook(): void {
  if (exitHookInstalled) return;
  exitHookInstalled = true;
  process.on('exit', () => {
    for (const pgid of liveGroups) signalGroup(pgid, 'SIGKILL');
  });
}

/**
 * Starts `argv` in a new process group (its pid is the group id). A shell guard holds our stdin
 * pipe: when this Node.js process dies, however, the pipe closes and the guard SIGKILLs the group.
 */
const GUARD = 'exec 3<&0; ( read -r _ <&3; kill -9 -$$ ) & exec "$@" </dev/null 3<&-';

export class ManagedProcess {
  readonly name: string;
  readonly logFile: string;
  readonly child: ChildProcess;
  readonly pid: number;
  exited = false;
  exitCode: number | null = null;
  exitSignal: NodeJS.Signals | null = null;
  private readonly exitPromise: Promise<void>;

  constructor(name: string, argv: string[], logFile: string) {
    this.name = name;
    this.logFile = logFile;
    const fd = fs.openSync(logFile, 'a');
    try {
      fs.writeSync(fd, `\n==== ${new Date().toISOString()} starting ${argv.join(' ')}\n`);
      this.child = spawn('/bin/sh', ['-c', GUARD, 'guard', ...argv], {
        detached: true,
        stdio: ['pipe', fd, fd],
        env: { ...process.env, HOME: path.dirname(logFile) },
      });
    } finally {
      fs.closeSync(fd);
    }
    if (this.child.pid === undefined) throw new Error(`could not start ${name}`);
    this.pid = this.child.pid;
    liveGroups.add(this.pid);
    installExitHook();
    this.exitPromise = new Promise((resolve) => {
      this.child.once('exit', (code, signal) => {
        this.exited = true;
        this.exitCode = code;
        this.exitSignal = signal;
        resolve();
      });
    });
    this.child.once('error', () => {
      this.exited = true;
    });
    // Neither the process nor our end of its guard pipe keeps the event loop alive.
    this.child.unref();
    (this.child.stdin as unknown as { unref?: () => void } | null)?.unref?.();
    this.child.stdin?.on('error', () => {});
  }

  describeExit(): string {
    return this.exitSignal ? `signal ${this.exitSignal}` : `exit code ${this.exitCode}`;
  }

  /** SIGTERM to the group, SIGKILL after graceMs; resolves when no process of the group is left. */
  async stop(graceMs = 10_000): Promise<void> {
    signalGroup(this.pid, 'SIGTERM');
    const deadline = Date.now() + graceMs;
    while (Date.now() < deadline && (!this.exited || processGroupAlive(this.pid))) await sleep(50);
    if (!this.exited || processGroupAlive(this.pid)) {
      signalGroup(this.pid, 'SIGKILL');
      const hard = Date.now() + 10_000;
      while (Date.now() < hard && (!this.exited || processGroupAlive(this.pid))) await sleep(50);
    }
    await Promise.race([this.exitPromise, sleep(1000)]);
    this.child.stdin?.destroy();
    if (processGroupAlive(this.pid))
      throw new Error(`${this.name} (process group ${this.pid}) would not die`);
    liveGroups.delete(this.pid);
  }
}
