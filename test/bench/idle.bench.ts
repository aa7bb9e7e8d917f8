/**
 * Idle cost of the shipped form: `node dist/main.js` with the default config (kernel, readonly and probe
 * monitors), standalone. Then where the RSS comes from (bare Node, Node plus the runtime dependencies,
 * the bundle) and what V8 / Node flags change. Targets: RSS <= 64 MiB (limit 80), CPU <= 2 millicores;
 * NPD measured 2 millicores / 30 MiB idle (npd.md §8). Also start-up to the first /metrics (issue 16:
 * <= 200 ms), idle RssAnon <= 24 MiB and CPU <= 1 millicore (use --seconds=120: a tick is 10 ms).
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { REPO } from '../support/agent-process.ts';
import { msToFirstOk, shippedNodeFlags, spawnBuilt, startBuilt } from './built-agent.ts';
import { formatUsage, loadNote, measure, mib, statusKiB } from './proc.ts';

export interface IdleOptions {
  readonly seconds: number;
  /** Also the RSS breakdown by what is loaded and the V8 flag sweep (~8 min). */
  readonly sweep: boolean;
}

/** Past the agent's second malloc_trim (40 s after start-up), so the window sees the steady state. */
const SETTLE_MS = 45_000;
const STARTS = 9;

/** A resident-set breakdown of one process: anonymous (heap, stacks) and file-backed (code, mapped). */
function rssParts(pid: number): string {
  const f = (name: string) => statusKiB(pid, name);
  return `VmRSS ${mib(f('VmRSS'))} (RssAnon ${mib(f('RssAnon'))}, RssFile ${mib(f('RssFile'))}), VmHWM ${mib(f('VmHWM'))}, threads ${f('Threads')}`;
}

/** Runs `node <flags> -e <script>` from the repo (so its node_modules resolve), settles, reports RSS. */
async function baseline(label: string, script: string): Promise<void> {
  const child: ChildProcess = spawn(process.execPath, ['--input-type=module', '-e', script], {
    cwd: REPO,
    stdio: 'ignore',
  });
  try {
    await new Promise((r) => setTimeout(r, 8000));
    const pid = child.pid as number;
    console.log(`  ${label.padEnd(58)} ${rssParts(pid)}`);
  } finally {
    child.kill('SIGKILL');
  }
}

const KEEP_ALIVE = 'setInterval(() => {}, 1000);';
/** The built-ins the agent needs anyway: its HTTP servers, the HTTPS API client, plugins. */
const BUILTINS = `for (const m of ['http', 'https', 'child_process', 'net', 'crypto']) await import('node:' + m);`;
const REQUIRE = `const require = (await import('node:module')).createRequire(process.cwd() + '/');`;
/** prom-client's four core files, without its index (cluster, pushgateway, default metrics, summary). */
const PROM_CORE = `${REQUIRE} for (const f of ['registry', 'counter', 'gauge', 'histogram']) require('prom-client/lib/' + f);`;
const PROM_INDEX = `await import('prom-client');`;
const OTHER_DEPS = `for (const m of ['pino', 'yaml', 'zod', 're2', 'koffi']) await import(m);`;

async function breakdown(): Promise<void> {
  console.log(`RSS by what is loaded (each settled 8 s; ${loadNote()}):`);
  await baseline('bare node + setInterval', KEEP_ALIVE);
  await baseline(
    'node + prom-client + pino + yaml',
    `await import('prom-client'); await import('pino'); await import('yaml'); ${KEEP_ALIVE}`,
  );
  await baseline('node + http, https, child_process, net, crypto', `${BUILTINS} ${KEEP_ALIVE}`);
  await baseline('  + prom-client (package index)', `${BUILTINS} ${PROM_INDEX} ${KEEP_ALIVE}`);
  await baseline('  + prom-client core files only', `${BUILTINS} ${PROM_CORE} ${KEEP_ALIVE}`);
  await baseline(
    '  + prom-client index + pino, yaml, zod, re2, koffi',
    `${BUILTINS} ${PROM_INDEX} ${OTHER_DEPS} ${KEEP_ALIVE}`,
  );
  await baseline(
    '  + prom-client core + pino, yaml, zod, re2, koffi',
    `${BUILTINS} ${PROM_CORE} ${OTHER_DEPS} ${KEEP_ALIVE}`,
  );
}

const FLAG_SETS: readonly (readonly string[])[] = [
  [],
  ['--max-semi-space-size=1'],
  ['--max-old-space-size=32'],
  ['--single-threaded-gc'],
  ['--v8-pool-size=1'],
  ['--lite-mode'],
  ['--max-semi-space-size=1', '--single-threaded-gc', '--v8-pool-size=1'],
  ['--max-semi-space-size=1', '--single-threaded-gc', '--v8-pool-size=1', '--lite-mode'],
  // A V8 flag NODE_OPTIONS refuses: it would go on the image's command line (BENCHMARKS f., issue 28).
  ['--max-semi-space-size=1', '--optimize-for-size'],
];

async function idleRun(flags: readonly string[], settleMs: number, windowMs: number): Promise<string> {
  const agent = await startBuilt(['--enable-k8s-exporter=false'], { nodeFlags: flags });
  try {
    await new Promise((r) => setTimeout(r, settleMs));
    const usage = await measure(agent.pid, windowMs);
    return `${formatUsage(usage)}; at the end ${rssParts(agent.pid)}`;
  } finally {
    await agent.stop();
  }
}

/** Spawn to the first 200 from /metrics, the shipped flags, through the shared start-up timer. */
async function timeToMetrics(): Promise<number> {
  const agent = await spawnBuilt(['--enable-k8s-exporter=false'], { nodeFlags: shippedNodeFlags() });
  try {
    return await msToFirstOk(agent, agent.metricsUrl);
  } finally {
    agent.child.kill('SIGKILL');
  }
}

async function startUp(): Promise<void> {
  const times: number[] = [];
  for (let i = 0; i < STARTS; i++) times.push(await timeToMetrics());
  times.sort((a, b) => a - b);
  const list = times.map((t) => t.toFixed(0)).join(' ');
  console.log(
    `start-up to first /metrics 200 (${STARTS} spawns, ${shippedNodeFlags().join(' ')}): median ` +
      `${times[STARTS >> 1]?.toFixed(0)} ms [${list}] (target <= 200 ms; ${loadNote()})`,
  );
}

export async function idleBench(opts: IdleOptions): Promise<void> {
  console.log(`## Idle: dist/main.js, default config, standalone`);
  await startUp();
  console.log(`settled ${SETTLE_MS / 1000} s, then ${opts.seconds} s, ${shippedNodeFlags().join(' ')}:`);
  console.log(`  ${await idleRun(shippedNodeFlags(), SETTLE_MS, opts.seconds * 1000)}`);
  if (!opts.sweep) return;
  await breakdown();
  const window = Math.max(10, Math.round(opts.seconds / 2));
  console.log(`V8/Node flags (each: settled 10 s, then ${window} s):`);
  for (const flags of FLAG_SETS) {
    const label = flags.length === 0 ? '(none)' : flags.join(' ');
    console.log(`  ${label}\n    ${await idleRun(flags, 10_000, window * 1000)}`);
  }
}
