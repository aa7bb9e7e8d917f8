/**
 * `npm run bench -- gpu`: the NVML monitor's cost (issue 40 section 4).
 *  1. CPU per poll in this process (gpu-poll.ts): every default check on 8 fake GPUs, through the binding.
 *  2. The built agent (dist/main.js, the shipped V8 flags) with only the NVML monitor: idle CPU and memory
 *     on a node with no library; with 8 fake GPUs at the default interval (no poll in the window); the
 *     same without the event wait (the fake's wait polls its events file every 2 ms, where NVML's blocks
 *     in the driver); and polled every second: CPU per poll end to end is that run's CPU minus the 60 s
 *     run's, per poll.
 * Prints measured numbers and asserts nothing; BENCHMARKS.md ("GPU monitor") records them.
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { buildFakeNvml } from '../support/fake-nvml/build.ts';
import { fakeNvmlEnv, writeFakeNvmlState } from '../support/fake-nvml/state.ts';
import { scrape, shippedNodeFlags, startBuilt } from './built-agent.ts';
import { pollCost } from './gpu-poll.ts';
import { formatUsage, loadNote, measure, type Usage } from './proc.ts';

export interface GpuBenchOptions {
  /** Polls measured in process. */
  readonly polls: number;
  /** Each agent run's measured window, after a 10 s settle. */
  readonly seconds: number;
  readonly gpus: number;
}

const SETTLE_MS = 10_000;

function inProcess(opts: GpuBenchOptions): void {
  const c = pollCost(opts.gpus, opts.polls);
  const own = c.cpuUsPerPoll - c.callsPerPoll * c.fakeCallUs;
  console.log(`in process, ${c.polls} polls of ${c.gpus} fake GPUs, checks ${c.checks.join(', ')}:`);
  console.log(
    `  CPU ${c.cpuUsPerPoll.toFixed(0)} µs per poll (wall ${c.wallUsPerPoll.toFixed(0)} µs), ` +
      `${c.callsPerPoll.toFixed(0)} NVML calls per poll`,
  );
  console.log(
    `  the fake answers one call in ${c.fakeCallUs.toFixed(1)} µs CPU (it re-reads its state file each call; ` +
      `a real NVML does not): the monitor's own share is about ${Math.max(0, own).toFixed(0)} µs per poll ` +
      `(${loadNote()})`,
  );
}

interface AgentCase {
  readonly label: string;
  /** The NVML config's lines beyond `plugin: nvml`. */
  readonly config: string;
}

/** Turns off every check that registers NVML events (xid, sbe-storm; ecc registers double-bit errors). */
const NO_EVENTS =
  'checks:\n  xid: { enabled: false }\n  sbe-storm: { enabled: false }\n  ecc: { enabled: false }';

/** One agent with only this NVML config: its CPU and memory over the window, printed and returned. */
async function agentRun(dir: string, c: AgentCase, env: NodeJS.ProcessEnv, seconds: number): Promise<Usage> {
  const file = join(dir, `${c.label.replace(/\W+/g, '-')}.yaml`);
  writeFileSync(file, `plugin: nvml\n${c.config}\n`);
  const agent = await startBuilt(['--enable-k8s-exporter=false', `--config.gpu-monitor=${file}`], {
    env,
    nodeFlags: shippedNodeFlags(),
  });
  try {
    await new Promise((r) => setTimeout(r, SETTLE_MS));
    const usage = await measure(agent.pid, seconds * 1000);
    const state = [...(await scrape(agent.metricsUrl))].find(
      ([k, v]) => k.startsWith('npd_gpu_monitor_state{') && v === 1,
    );
    console.log(
      `  ${c.label} (monitor ${state?.[0].replace(/.*state="(\w+)".*/, '$1') ?? 'state unknown'}):`,
    );
    console.log(`    ${formatUsage(usage)}`);
    return usage;
  } finally {
    await agent.stop();
  }
}

async function wholeAgent(opts: GpuBenchOptions): Promise<void> {
  const dir = mkdtempSync(join(tmpdir(), 'npd-gpu-bench-'));
  try {
    const env = fakeNvmlEnv(dir);
    writeFakeNvmlState(env.FAKE_NVML_STATE, { count: opts.gpus });
    writeFileSync(env.FAKE_NVML_EVENTS, '');
    const fake = `library: ${JSON.stringify(buildFakeNvml())}`;
    const n = opts.gpus;
    console.log(
      `dist/main.js with only --config.gpu-monitor, settled ${SETTLE_MS / 1000} s, then ${opts.seconds} s:`,
    );
    const run = (label: string, config: string) => agentRun(dir, { label, config }, env, opts.seconds);
    await run('no NVML library (a node without NVIDIA GPUs)', 'library: /nonexistent/libnvidia-ml.so.1');
    const idle = await run(`${n} fake GPUs, default interval (60 s: no poll in the window)`, fake);
    await run(`${n} fake GPUs, no event wait (xid, sbe-storm and ecc off)`, `${fake}\n${NO_EVENTS}`);
    const busy = await run(`${n} fake GPUs, polled every 1 s`, `${fake}\ninterval: 1s`);
    const polls = busy.wallSeconds;
    const perPoll =
      ((busy.cpuSeconds - idle.cpuSeconds * (busy.wallSeconds / idle.wallSeconds)) / polls) * 1e6;
    console.log(
      `  CPU per poll end to end (1 s interval minus the 60 s one, over ${polls.toFixed(0)} polls): ` +
        `${perPoll.toFixed(0)} µs`,
    );
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

export async function gpuBench(opts: GpuBenchOptions): Promise<void> {
  console.log(`## GPU monitor (NVML)`);
  inProcess(opts);
  await wholeAgent(opts);
}
