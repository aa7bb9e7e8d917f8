/**
 * The shipped form of the agent for benchmarks: `node dist/main.js`, the esbuild bundle, started as its
 * own process so /proc reports its CPU and memory alone (no tsx loader, no test runner).
 */
import { type ChildProcess, execFileSync, spawn } from 'node:child_process';
import { chmodSync, copyFileSync, existsSync, mkdirSync, readFileSync, statSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { parseAllDocuments } from 'yaml';
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

/** A benchmarked process (this agent or NPD): its pid, its output's tail and a clean stop. */
export interface WatchedProcess {
  readonly child: ChildProcess;
  readonly pid: number;
  /** performance.now() just before spawn(), for start-up timings. */
  readonly spawnedAt: number;
  output(): string;
  /** SIGTERM, then the exit code. */
  stop(): Promise<number | null>;
}

export interface BuiltAgent extends WatchedProcess {
  readonly statusUrl: string;
  readonly metricsUrl: string;
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

/** Spawns `command args` with a clean environment (no KUBECONFIG from the caller's shell). */
export function spawnWatched(
  command: string,
  args: readonly string[],
  opts: Omit<BuiltAgentOptions, 'nodeFlags'> = {},
): WatchedProcess {
  const spawnedAt = performance.now();
  const child = spawn(command, args, {
    cwd: REPO,
    // A benchmark must not report to some real cluster.
    env: { PATH: process.env.PATH, HOME: process.env.HOME, KUBECONFIG: '', ...opts.env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const output = capture(child, opts.keepOutputBytes ?? 4 * 1024 * 1024);
  const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
  if (child.pid === undefined) throw new Error(`could not start ${command}`);
  return {
    child,
    pid: child.pid,
    spawnedAt,
    output,
    async stop() {
      if (child.exitCode === null && child.signalCode === null) child.kill('SIGTERM');
      return exited;
    },
  };
}

/**
 * The node binary the agent runs from: a private copy of this one. In the image the agent is the only
 * process mapping its `node`; run from the bench's own binary, every page the two share would count in
 * both RSS figures and the agent's start-up page-out (src/host/page-out.ts) could not drop them.
 */
export function agentNode(): string {
  const copy = join(REPO, '.cache', 'bench-node', 'node');
  const same = existsSync(copy) && statSync(copy).size === statSync(process.execPath).size;
  if (!same) {
    mkdirSync(dirname(copy), { recursive: true });
    copyFileSync(process.execPath, copy);
    chmodSync(copy, 0o755);
  }
  return copy;
}

/** Spawns the bundle on two free ports without waiting for it (start-up timings poll it themselves). */
export async function spawnBuilt(args: readonly string[], opts: BuiltAgentOptions = {}): Promise<BuiltAgent> {
  const [port, promPort] = [await freePort(), await freePort()];
  const argv = [
    ...(opts.nodeFlags ?? []),
    BUNDLE,
    `--port=${port}`,
    `--prometheus-port=${promPort}`,
    ...args,
  ];
  return {
    ...spawnWatched(agentNode(), argv, opts),
    statusUrl: `http://127.0.0.1:${port}`,
    metricsUrl: `http://127.0.0.1:${promPort}/metrics`,
  };
}

export async function startBuilt(args: readonly string[], opts: BuiltAgentOptions = {}): Promise<BuiltAgent> {
  const agent = await spawnBuilt(args, opts);
  try {
    await waitFor(async () => (await fetch(`${agent.statusUrl}/healthz`)).ok, 30_000, agent.output);
  } catch (err) {
    agent.child.kill('SIGKILL');
    throw err;
  }
  return agent;
}

/**
 * Milliseconds from spawn to the first 200 from `url`, polled every 2 ms (the harness's waitFor polls
 * every 200 ms, too coarse for a start-up time).
 */
export async function msToFirstOk(proc: WatchedProcess, url: string, timeoutMs = 30_000): Promise<number> {
  for (;;) {
    try {
      if ((await fetch(url)).ok) return performance.now() - proc.spawnedAt;
    } catch {
      // not listening yet
    }
    if (performance.now() - proc.spawnedAt > timeoutMs || proc.child.exitCode !== null)
      throw new Error(`${url}: no 200 within ${timeoutMs} ms\n${proc.output().slice(-4000)}`);
    await new Promise((r) => setTimeout(r, 2));
  }
}

/** The V8 flags the DaemonSet gives the agent (NODE_OPTIONS in deploy/base/daemonset.yaml). */
export function shippedNodeFlags(): string[] {
  const docs = parseAllDocuments(readFileSync(join(REPO, 'deploy', 'base', 'daemonset.yaml'), 'utf8'));
  const ds = docs.map((d) => d.toJS() as DaemonSetDoc).find((d) => d?.kind === 'DaemonSet');
  const env = ds?.spec?.template?.spec?.containers?.[0]?.env ?? [];
  const value = env.find((e) => e.name === 'NODE_OPTIONS')?.value;
  if (value === undefined)
    throw new Error('deploy/base/daemonset.yaml: no NODE_OPTIONS in the first container');
  return value.split(/\s+/).filter(Boolean);
}

interface DaemonSetDoc {
  kind?: string;
  spec?: { template?: { spec?: { containers?: { env?: { name: string; value?: string }[] }[] } } };
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
