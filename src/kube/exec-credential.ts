import { type ChildProcess, type SpawnOptions, spawn as nodeSpawn } from 'node:child_process';
import { isAbsolute, join } from 'node:path';
import type { Clock } from '../core/clock.ts';
import type { AuthHeaders } from './auth.ts';

/** A plugin run never lasts longer than this, nor longer than the request that waits for it. */
export const EXEC_TIMEOUT_MS = 30_000;
/** An ExecCredential is a few KiB; more output than this means the plugin is broken. */
export const EXEC_MAX_OUTPUT_BYTES = 1024 * 1024;
const STDERR_KEPT_BYTES = 4096;

/** Why credentials could not be had; the label of npd_apiserver_credential_failures_total. */
export const CREDENTIAL_FAILURES = [
  'timeout',
  'output_too_large',
  'exit',
  'start',
  'invalid',
  'error',
] as const;
export type CredentialFailure = (typeof CREDENTIAL_FAILURES)[number];

export class CredentialError extends Error {
  readonly reason: CredentialFailure;
  constructor(reason: CredentialFailure, message: string) {
    super(message);
    this.name = 'CredentialError';
    this.reason = reason;
  }
}

/** kubeconfig `users[].user.exec` (client.authentication.k8s.io). */
export interface ExecConfig {
  readonly command: string;
  readonly args: readonly string[];
  readonly env: Readonly<Record<string, string>>;
  readonly apiVersion: string;
}

export type SpawnFn = (command: string, args: readonly string[], options: SpawnOptions) => ChildProcess;

export interface ExecDeps {
  readonly clock: Clock;
  readonly spawn?: SpawnFn;
  /** process.kill; a negative pid signals the process group. */
  readonly kill?: (pid: number, signal: NodeJS.Signals) => void;
}

/** Reads the exec stanza as client-go does: a relative command with a slash is relative to the file. */
export function parseExecConfig(exec: unknown, dir: string): ExecConfig {
  const doc = (exec ?? {}) as Record<string, unknown>;
  const command = typeof doc.command === 'string' ? doc.command : '';
  if (command === '') throw new Error('kubeconfig user exec: no command');
  const args = Array.isArray(doc.args) ? doc.args.map(String) : [];
  const env: Record<string, string> = {};
  for (const e of Array.isArray(doc.env) ? doc.env : []) {
    const { name, value } = (e ?? {}) as { name?: unknown; value?: unknown };
    if (typeof name === 'string') env[name] = String(value ?? '');
  }
  const apiVersion =
    typeof doc.apiVersion === 'string' ? doc.apiVersion : 'client.authentication.k8s.io/v1beta1';
  const resolved = command.includes('/') && !isAbsolute(command) ? join(dir, command) : command;
  return { command: resolved, args, env, apiVersion };
}

interface Credential {
  readonly token: string;
  /** Epoch ms; undefined: valid until the process ends, as client-go caches it. */
  readonly expiresAt: number | undefined;
}

/**
 * Bearer tokens from an exec credential plugin. One run at a time, shared by every request waiting
 * for it; the token is cached until its expirationTimestamp. A run is killed (its whole process group)
 * when it outlives EXEC_TIMEOUT_MS or the deadline of the request that started it, or prints more than
 * EXEC_MAX_OUTPUT_BYTES; each failure rejects with a CredentialError naming why.
 */
export function execAuth(config: ExecConfig, deps: ExecDeps): AuthHeaders {
  let cached: Credential | undefined;
  let running: Promise<Credential> | undefined;
  return async (budgetMs = EXEC_TIMEOUT_MS) => {
    if (cached && (cached.expiresAt === undefined || cached.expiresAt > deps.clock.now())) {
      return { authorization: `Bearer ${cached.token}` };
    }
    running ??= runPlugin(config, deps, Math.min(EXEC_TIMEOUT_MS, budgetMs)).finally(() => {
      running = undefined;
    });
    cached = await running;
    return { authorization: `Bearer ${cached.token}` };
  };
}

function runPlugin(config: ExecConfig, deps: ExecDeps, timeoutMs: number): Promise<Credential> {
  return new Promise((resolve, reject) => {
    const info = { apiVersion: config.apiVersion, kind: 'ExecCredential', spec: { interactive: false } };
    let child: ChildProcess;
    try {
      child = (deps.spawn ?? nodeSpawn)(config.command, config.args, {
        detached: true,
        stdio: ['ignore', 'pipe', 'pipe'],
        env: { ...process.env, ...config.env, KUBERNETES_EXEC_INFO: JSON.stringify(info) },
      });
    } catch (err) {
      reject(new CredentialError('start', `exec plugin ${config.command}: ${(err as Error).message}`));
      return;
    }
    new PluginRun(config, deps, child, timeoutMs, resolve, reject).watch();
  });
}

class PluginRun {
  private readonly config: ExecConfig;
  private readonly deps: ExecDeps;
  private readonly child: ChildProcess;
  private readonly resolve: (c: Credential) => void;
  private readonly reject: (e: CredentialError) => void;
  private readonly stdout: Buffer[] = [];
  private stdoutBytes = 0;
  private stderr = '';
  private done = false;
  private readonly timer: { cancel(): void };

  constructor(
    config: ExecConfig,
    deps: ExecDeps,
    child: ChildProcess,
    timeoutMs: number,
    resolve: (c: Credential) => void,
    reject: (e: CredentialError) => void,
  ) {
    this.config = config;
    this.deps = deps;
    this.child = child;
    this.resolve = resolve;
    this.reject = reject;
    this.timer = deps.clock.setTimeout(
      () => this.fail('timeout', `exec plugin ${config.command} ran longer than ${timeoutMs}ms`),
      timeoutMs,
    );
  }

  watch(): void {
    const { child } = this;
    child.stdout?.on('data', (chunk: Buffer) => {
      if (this.done) return;
      this.stdoutBytes += chunk.length;
      if (this.stdoutBytes > EXEC_MAX_OUTPUT_BYTES) {
        this.fail(
          'output_too_large',
          `exec plugin ${this.config.command} printed over ${EXEC_MAX_OUTPUT_BYTES} bytes`,
        );
      } else this.stdout.push(chunk);
    });
    child.stderr?.on('data', (chunk: Buffer) => {
      if (this.stderr.length < STDERR_KEPT_BYTES) this.stderr += chunk.toString('utf8', 0, STDERR_KEPT_BYTES);
    });
    child.stdout?.on('error', () => {});
    child.stderr?.on('error', () => {});
    child.on('error', (err) => this.fail('start', `exec plugin ${this.config.command}: ${err.message}`));
    child.on('close', (code, signal) => this.closed(code, signal));
  }

  private closed(code: number | null, signal: NodeJS.Signals | null): void {
    if (this.done) return;
    if (code !== 0) {
      const why = signal ? `signal ${signal}` : `exit status ${code}`;
      this.fail('exit', `exec plugin ${this.config.command}: ${why}: ${this.stderr.slice(0, 256).trim()}`);
      return;
    }
    const parsed = parseCredential(Buffer.concat(this.stdout).toString('utf8'), this.config.apiVersion);
    if (parsed instanceof CredentialError) this.fail(parsed.reason, parsed.message);
    else this.settle(() => this.resolve(parsed));
  }

  private fail(reason: CredentialFailure, message: string): void {
    this.settle(() => this.reject(new CredentialError(reason, message)));
    // Whatever it forked goes too; a plugin stuck in the kernel is left to the reaper.
    const pid = this.child.pid;
    if (pid !== undefined && this.child.exitCode === null) {
      try {
        (this.deps.kill ?? process.kill)(-pid, 'SIGKILL');
      } catch {
        // already gone
      }
    }
    this.stdout.length = 0;
  }

  private settle(outcome: () => void): void {
    if (this.done) return;
    this.done = true;
    this.timer.cancel();
    outcome();
  }
}

/** client-go's checks: the same apiVersion back, kind ExecCredential, a token in status. */
function parseCredential(text: string, apiVersion: string): Credential | CredentialError {
  let doc: { apiVersion?: unknown; kind?: unknown; status?: Record<string, unknown> };
  try {
    doc = JSON.parse(text) as typeof doc;
  } catch {
    return new CredentialError('invalid', 'exec plugin output is not JSON');
  }
  if (doc?.kind !== 'ExecCredential' || doc.apiVersion !== apiVersion) {
    return new CredentialError('invalid', `exec plugin output is not an ${apiVersion} ExecCredential`);
  }
  const token = doc.status?.token;
  if (typeof token !== 'string' || token === '') {
    // Client certificates from a plugin would need a new TLS agent per rotation; not supported.
    return new CredentialError('invalid', 'exec plugin returned no status.token');
  }
  const exp = doc.status?.expirationTimestamp;
  const expiresAt = typeof exp === 'string' ? Date.parse(exp) : undefined;
  return { token, expiresAt: expiresAt !== undefined && Number.isFinite(expiresAt) ? expiresAt : undefined };
}
