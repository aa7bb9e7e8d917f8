/**
 * `npm run test:gpu`: the agent against a real NVIDIA GPU (issue 40 section 4; test/gpu/README.md).
 * Runs with Node 24 alone (type stripping, node: modules only); the agent and the probe come from the kit.
 *
 *   node test/gpu/run.ts                  real GPU: the built agent with rules/gpu.yaml and
 *                                         rules/gpu-nvml.yaml, a real Xid 31 and 43 from xid-fault.py
 *   node test/gpu/run.ts --dry-run        the same against the fake NVML (--gpus=8) and a FIFO as /dev/kmsg,
 *                                         the H200's real lines and events standing in for the driver
 *   --dry-run=silent                      the stand-in writes nothing: the run must fail (negative control)
 *   --wait-seconds=20                     how long each Xid may take to show
 *   --no-build                            use .cache/gpu-kit as it is, even where node_modules could rebuild it
 *
 * No GPU (no library, or NVML sees none): says so and exits 0. Otherwise prints the table (report.ts) and
 * exits 1 only when the agent saw a made Xid through neither path. Bounded: under 3 minutes in all.
 * Environment: NPD_GPU_NVML_LIBRARY (another libnvidia-ml.so.1), NPD_XID_FAULT_WAY, PYTHON.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { waitFor } from '../support/agent-process.ts';
import { type GpuAgent, startGpuAgent } from './agent.ts';
import { type FakeHost, makeFakeHost } from './fake-host.ts';
import { type FaultOutcome, makeXid } from './fault.ts';
import { type PathSources, scrape, total, type XidView, xidView } from './observe.ts';
import { KERNEL_RULES, KIT } from './paths.ts';
import type { ProbeReport } from './probe-report.ts';
import { type Condition, checksSection, conditionSection, metricsSection, xidSection } from './report.ts';
import { ensureKit, nvmlConfig, pathSources, runProbe } from './setup.ts';

interface Options {
  readonly dryRun: 'off' | 'on' | 'silent';
  readonly build: boolean;
  readonly gpus: number;
  readonly waitMs: number;
}

/** The run stays under 3 minutes from the kit on: every wait takes what is left, at most. */
let deadline = Date.now() + 170_000;
const left = (ms: number): number => Math.max(1000, Math.min(ms, deadline - Date.now()));

function parseOptions(argv: readonly string[]): Options {
  const opt = (name: string) => argv.find((a) => a === `--${name}` || a.startsWith(`--${name}=`));
  const value = (name: string) => opt(name)?.split('=')[1];
  const dry = opt('dry-run');
  return {
    dryRun: dry === undefined ? 'off' : value('dry-run') === 'silent' ? 'silent' : 'on',
    build: opt('no-build') === undefined,
    gpus: Number(value('gpus') ?? 8),
    waitMs: Number(value('wait-seconds') ?? 20) * 1000,
  };
}

interface Run {
  readonly agent: GpuAgent;
  readonly sources: PathSources;
  readonly host: FakeHost | undefined;
  readonly opts: Options;
}

/**
 * A dry run's fault: the H200's records one at a time (each read alone) and NVML's event, Xid 31 with the
 * kernel log first and Xid 43 with NVML first, so both of the agent's orders are exercised.
 */
async function dryFault(run: Run, xid: 31 | 43): Promise<FaultOutcome> {
  const host = run.host as FakeHost;
  if (run.opts.dryRun === 'silent')
    return {
      xid,
      way: 'dry-run (silent)',
      error: 'none: nothing written',
      pid: process.pid,
      startedAt: Date.now(),
    };
  const count = async (name: string, labels: Record<string, string>) =>
    total(await scrape(run.agent.metricsUrl), name, labels);
  const read = () => count('npd_log_lines_read_total', { source: run.sources.kernel });
  const events = () => count('npd_gpu_nvml_events_total', { source: run.sources.nvml, type: 'xid' });
  const [readBase, eventBase] = [await read(), await events()];
  const until = (check: () => Promise<boolean>) => waitFor(check, left(10_000), run.agent.tail);
  return host.fault(xid, xid === 31 ? 'kernel-first' : 'nvml-first', {
    kmsg: (n) => until(async () => (await read()) >= readBase + n),
    nvml: () => until(async () => (await events()) > eventBase),
  });
}

/** One Xid: the fault, then both paths polled until each saw it or the wait is over. */
async function oneXid(run: Run, xid: 31 | 43): Promise<XidView> {
  const before = await scrape(run.agent.metricsUrl);
  const fault = run.host ? await dryFault(run, xid) : await makeXid(xid, left(90_000));
  if (fault.way === null || fault.error === null) {
    const none = { seen: false, detail: 'no fault was made' };
    return { fault, kernel: none, nvml: none };
  }
  const until = Date.now() + left(run.opts.waitMs);
  for (;;) {
    const view = xidView(fault, before, await scrape(run.agent.metricsUrl), run.agent.records(), run.sources);
    if ((view.kernel.seen && view.nvml.seen) || Date.now() >= until) return view;
    await new Promise((r) => setTimeout(r, 250));
  }
}

/** The NVML monitor has started NVML (running) or given up on it (nvml_failed). */
async function monitorStarted(run: Run): Promise<string> {
  const state = async (s: string) =>
    total(await scrape(run.agent.metricsUrl), 'npd_gpu_monitor_state', {
      source: run.sources.nvml,
      state: s,
    });
  try {
    await waitFor(
      async () => (await state('running')) === 1 || (await state('nvml_failed')) === 1,
      left(30_000),
    );
  } catch {
    return 'the NVML monitor did not start within 30 s';
  }
  return (await state('running')) === 1 ? 'running' : 'nvml_failed';
}

async function printTable(
  run: Run,
  views: readonly XidView[],
  probe: ProbeReport,
  monitor: string,
): Promise<void> {
  const conditions = (await (await fetch(`${run.agent.statusUrl}/conditions`)).json()) as Condition[];
  const samples = await scrape(run.agent.metricsUrl);
  const mode = run.host ? `dry run: fake NVML with ${run.opts.gpus} GPUs, a FIFO as /dev/kmsg` : 'real GPU';
  const lines = [
    `== test:gpu (${mode}) ${new Date().toISOString()}, node ${process.version}, agent ${join(KIT, 'main.js')}`,
    `   NVML monitor: ${monitor}`,
    ...xidSection(views),
    ...conditionSection(conditions),
    ...metricsSection(samples, [run.sources.kernel, run.sources.nvml]),
    ...checksSection(probe),
  ];
  console.log(lines.join('\n'));
}

/** 1 when a made Xid went unseen by both paths; a fault that could not be made is reported, not failed. */
function verdict(views: readonly XidView[]): number {
  const made = views.filter((v) => v.fault.way !== null && v.fault.error !== null);
  const missed = made.filter((v) => !v.kernel.seen && !v.nvml.seen).map((v) => v.fault.xid);
  const oneSided = made.filter((v) => v.kernel.seen !== v.nvml.seen).map((v) => v.fault.xid);
  if (made.length < views.length) console.log('== NOTE: not every Xid could be made (see above): not tested');
  if (oneSided.length > 0) console.log(`== NOTE: Xid ${oneSided.join(', ')} seen through one path only`);
  if (missed.length > 0) {
    console.log(`== FAIL: the agent saw Xid ${missed.join(', ')} through neither the kernel log nor NVML`);
    return 1;
  }
  if (made.length === 0) console.log('== NOT TESTED: no Xid could be made on this machine');
  else console.log(`== PASS: ${made.length} Xid(s) made, each seen by the agent`);
  return 0;
}

async function exercise(
  run: Run,
  probe: ProbeReport,
  nvmlFile: string,
  env: NodeJS.ProcessEnv,
): Promise<number> {
  const monitor = await monitorStarted(run);
  const views = [await oneXid(run, 31), await oneXid(run, 43)];
  const after = runProbe(nvmlFile, run.host?.root ?? '/', env, left(30_000));
  await printTable(run, views, after.state === 'ready' ? after : probe, monitor);
  return verdict(views);
}

async function main(): Promise<number> {
  const opts = parseOptions(process.argv.slice(2));
  const noKit = ensureKit(opts.build);
  if (noKit) {
    console.error(`test:gpu: ${noKit}`);
    return 1;
  }
  deadline = Date.now() + 170_000;
  const dir = mkdtempSync(join(tmpdir(), 'npd-test-gpu-'));
  const host = opts.dryRun === 'off' ? undefined : makeFakeHost(dir, opts.gpus);
  try {
    const library = host?.library ?? process.env.NPD_GPU_NVML_LIBRARY;
    const nvmlFile = nvmlConfig(dir, library);
    const env = host?.env ?? {};
    const probe = runProbe(nvmlFile, host?.root ?? '/', env, left(30_000));
    if (probe.state === 'no_library' || probe.state === 'no_gpu') {
      console.log(`test:gpu: no NVIDIA GPU here (${probe.state}: ${probe.why}); nothing to test`);
      return 0;
    }
    const agent = await startGpuAgent({
      bundle: join(KIT, 'main.js'),
      systemLogConfig: KERNEL_RULES,
      gpuConfig: nvmlFile,
      ...(host ? { hostRoot: host.root } : {}),
      env,
    });
    try {
      return await exercise({ agent, sources: pathSources(nvmlFile), host, opts }, probe, nvmlFile, env);
    } finally {
      await agent.stop();
    }
  } finally {
    host?.close();
    rmSync(dir, { recursive: true, force: true });
  }
}

try {
  process.exitCode = await main();
} catch (err) {
  // A step that broke (the agent refused to start, a wait ran out): the run failed, say where.
  console.error(`test:gpu: ${err instanceof Error ? (err.stack ?? err.message) : String(err)}`);
  process.exitCode = 1;
}
