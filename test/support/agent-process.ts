/**
 * Runs the real agent as a child process for integration and end-to-end tests.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { accessSync, constants } from 'node:fs';
import { createServer } from 'node:net';
import { join } from 'node:path';

export const REPO = join(import.meta.dirname, '..', '..');

/** Tests that inject real kernel lines need a readable and writable /dev/kmsg (root, no read-only /dev). */
export function kmsgWritable(): boolean {
  try {
    accessSync('/dev/kmsg', constants.R_OK | constants.W_OK);
    return true;
  } catch {
    return false;
  }
}

export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const srv = createServer();
    srv.once('error', reject);
    srv.listen(0, '127.0.0.1', () => {
      const port = (srv.address() as { port: number }).port;
      srv.close(() => resolve(port));
    });
  });
}

export interface AgentProcess {
  readonly child: ChildProcess;
  readonly statusUrl: string;
  readonly metricsUrl: string;
  output(): string;
  /** Sends SIGTERM and resolves with the exit code. */
  stop(): Promise<number | null>;
}

export async function startAgent(
  args: readonly string[],
  env: NodeJS.ProcessEnv = {},
): Promise<AgentProcess> {
  const [port, promPort] = [await freePort(), await freePort()];
  const child = spawn(
    process.execPath,
    [
      '--import',
      'tsx',
      join(REPO, 'src', 'main.ts'),
      `--port=${port}`,
      `--prometheus-port=${promPort}`,
      ...args,
    ],
    { cwd: REPO, env: { ...process.env, LOG_LEVEL: 'debug', ...env }, stdio: ['ignore', 'pipe', 'pipe'] },
  );
  let out = '';
  child.stdout?.on('data', (d: Buffer) => {
    out += d.toString();
  });
  child.stderr?.on('data', (d: Buffer) => {
    out += d.toString();
  });
  const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
  const agent: AgentProcess = {
    child,
    statusUrl: `http://127.0.0.1:${port}`,
    metricsUrl: `http://127.0.0.1:${promPort}/metrics`,
    output: () => out,
    async stop() {
      if (child.exitCode === null) child.kill('SIGTERM');
      return exited;
    },
  };
  await waitFor(
    async () => (await fetch(`${agent.statusUrl}/conditions`)).ok,
    30_000,
    () => out,
  );
  return agent;
}

/** Polls until `check` is true; bounded, and reports `context()` when it gives up. */
export async function waitFor(
  check: () => Promise<boolean> | boolean,
  timeoutMs: number,
  context: () => string = () => '',
): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  let lastError: unknown;
  while (Date.now() < deadline) {
    try {
      if (await check()) return;
    } catch (err) {
      lastError = err;
    }
    await new Promise((r) => setTimeout(r, 200));
  }
  throw new Error(`timed out after ${timeoutMs} ms (${String(lastError ?? '')})\n${context().slice(-4000)}`);
}

/** Reads one sample from Prometheus text, e.g. metric('problem_counter{reason="X"}'). */
export async function metricValue(url: string, series: string): Promise<number | undefined> {
  const text = await (await fetch(url)).text();
  for (const line of text.split('\n')) {
    if (line.startsWith(`${series} `)) return Number(line.slice(series.length + 1));
  }
  return undefined;
}

/** Runs the agent to its exit; a hang fails the caller (the child is killed) instead of blocking it. */
export function runAgentToExit(args: readonly string[]): Promise<{ code: number | null; stderr: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, ['--import', 'tsx', join(REPO, 'src', 'main.ts'), ...args], {
      cwd: REPO,
      stdio: ['ignore', 'ignore', 'pipe'],
    });
    let stderr = '';
    child.stderr?.on('data', (d: Buffer) => {
      stderr += d.toString();
    });
    const timer = setTimeout(() => {
      child.kill('SIGKILL');
      reject(new Error(`agent did not exit within 30 s: ${stderr}`));
    }, 30_000);
    child.once('exit', (code) => {
      clearTimeout(timer);
      resolve({ code, stderr });
    });
  });
}
