/**
 * The shipped form of the agent for benchmarks: `node dist/main.js`, the esbuild bundle, started as its
 * own process so /proc reports its CPU and memory alone (no tsx loader, no test runner).
 */
import { type ChildProcess, execFileSync, spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { freePort, REPO, waitFor } from '../support/agent-process.ts';

export const BUNDLE = join(REPO, 'dist', 'main.js');

/** Builds dist/main.js from the current sources, so the benchmark measures what is checked out. */
export function buildBundle(): void {
  execFileSync(process.execPath, ['--import', 'tsx', join(REPO, 'test', 'tools', 'build.ts')], {
    cwd: REPO,
    stdio: 'inherit',
  });
  if (!existsSync(BUNDLE)) throw new Error(`${BUNDLE} was not built`);
}

export interface BuiltAgent {
  readonly child: ChildProcess;
  readonly pid: number;
  readonly statusUrl: string;
  readonly metricsUrl: string;
  output(): string;
  /** SIGTERM, then the exit code. */
  stop(): Promise<number | null>;
}

export interface BuiltAgentOptions {
  /** V8 / Node flags placed before the bundle, e.g. --max-semi-space-size=1. */
  readonly nodeFlags?: readonly string[];
  readonly env?: NodeJS.ProcessEnv;
  /** Keep at most this much output (a flood logs a lot); default 4 MiB. */
  readonly keepOutputBytes?: number;
}

/** Keeps the tail of the child's stdout and stderr; a flood logs far more than a test needs. */
function capture(child: ChildProcess, keep: number): () => string {
  let out = '';
  const collect = (d: Buffer) => {
    out += d.toString();
    if (out.length > keep * 2) out = out.slice(-keep);
  };
  child.stdout?.on('data', collect);
  child.stderr?.on('data', collect);
  return () => out;
}

export async function startBuilt(args: readonly string[], opts: BuiltAgentOptions = {}): Promise<BuiltAgent> {
  const [port, promPort] = [await freePort(), await freePort()];
  const child = spawn(
    process.execPath,
    [...(opts.nodeFlags ?? []), BUNDLE, `--port=${port}`, `--prometheus-port=${promPort}`, ...args],
    {
      cwd: REPO,
      // No KUBECONFIG from the caller's shell: a benchmark must not report to some real cluster.
      env: { PATH: process.env.PATH, HOME: process.env.HOME, KUBECONFIG: '', ...opts.env },
      stdio: ['ignore', 'pipe', 'pipe'],
    },
  );
  const output = capture(child, opts.keepOutputBytes ?? 4 * 1024 * 1024);
  const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
  if (child.pid === undefined) throw new Error('could not start the agent');
  const agent: BuiltAgent = {
    child,
    pid: child.pid,
    statusUrl: `http://127.0.0.1:${port}`,
    metricsUrl: `http://127.0.0.1:${promPort}/metrics`,
    output,
    async stop() {
      if (child.exitCode === null && child.signalCode === null) child.kill('SIGTERM');
      return exited;
    },
  };
  try {
    await waitFor(async () => (await fetch(`${agent.statusUrl}/healthz`)).ok, 30_000, output);
  } catch (err) {
    child.kill('SIGKILL');
    throw err;
  }
  return agent;
}

/** Every sample of a Prometheus text page, keyed by `name{labels}` exactly as printed. */
export async function scrape(url: string): Promise<Map<string, number>> {
  const text = await (await fetch(url)).text();
  const out = new Map<string, number>();
  for (const line of text.split('\n')) {
    if (line === '' || line.startsWith('#')) continue;
    const cut = line.lastIndexOf(' ');
    out.set(line.slice(0, cut), Number(line.slice(cut + 1)));
  }
  return out;
}

/** Sum of every series of `name` whose labels contain all of `labels` (e.g. 'point="flush"'). */
export function sum(samples: Map<string, number>, name: string, ...labels: string[]): number {
  let total = 0;
  for (const [key, value] of samples) {
    const bare = key.split('{', 1)[0];
    if (bare !== name) continue;
    if (labels.every((l) => key.includes(l))) total += value;
  }
  return total;
}
