/**
 * `npm run bench [-- <bench>... [--key=value]...]`: prints measured numbers and asserts nothing.
 * BENCHMARKS.md records the results.
 *
 *   rules  rule engine over a mixed kernel log, and the journald and filelog rule sets (the default, a few seconds)
 *   kmsg   kmsg flood end to end: --rate=20000 --seconds=60 --marks=600 --node-flags=--a,--b
 *          --agent-log=FILE (root; floods the machine's kernel log, so never beside e2e tests)
 *   idle   idle bundle, start-up, RSS breakdown and V8 flags: --seconds=60 --sweep=0 (skip breakdown and flags)
 *   storm  event storm against a real kube-apiserver: --lines=10000 --seconds=10
 *   scale  many node identities in one process against a real kube-apiserver: --nodes=200
 *   fleet  issue 41's fleet: node identities with the DaemonSet's identity in worker processes beside a
 *          Lease-renewing neighbour, through a rollout, steady state, a correlated failure, an outage and
 *          throttling: --nodes=1000 --workers=2 --heartbeat=300 --rollout=60 --steady=300 --outage=120
 *          --throttle=120 (about 20 minutes at 1,000; not in `all`; 0 for steady, outage or throttle leaves it out)
 *   process  CPU per scrape of the process_* metrics: --scrapes=2000
 *   vs-npd this agent beside the real NPD v1.36.0 (test/tools/npd/build.sh builds it into .cache once) on
 *          the same /dev/kmsg with NPD's kernel-monitor.json: --rates=5000,20000,40000 --seconds=20
 *          --marks=200 --cpu-rate=2000 --cpu-seconds=60 --idle-seconds=60 --settle-seconds=15
 *          --life-idle-seconds=300 --runs=5 --storm-lines=10000 --storm-seconds=10 (root; about 11 minutes)
 *   container  the built image under podman with NPD's 80 MiB and the DaemonSet's CPU limit against a real
 *          kube-apiserver: --idle-seconds=600 --flood-seconds=60 --rate=40000 --storm-lines=10000
 *          --storm-seconds=10 --memory-mib=80 (root; builds the image; floods /dev/kmsg under its lock)
 *   node   the agent pod under a real kubelet and containerd with deploy/base's limits, through a flood and
 *          an event storm: --rate=40000 --seconds=60 --storm-lines=200 (root; floods /dev/kmsg under its lock)
 *   gpu    the NVML monitor with 8 fake GPUs (test/support/fake-nvml): CPU per poll in process, and the built
 *          agent's idle CPU and memory with no library, 8 GPUs, 8 GPUs polled every second: --polls=2000
 *          --seconds=30 --gpus=8
 *   deps   each hand-written protocol client (D-Bus, CRI gRPC, protobuf, OTLP, Kubernetes) against the maintained
 *          library: load RSS and time, bundle and install size, wire cross-check: --runs=7 --dir=DIR (installs
 *          the libraries from the npm registry into DIR or a temporary directory; not in `all`)
 *   all    every one of the above but deps and fleet, in that order
 *
 * kmsg, storm, vs-npd and container flood the kernel log: they run under `flock /tmp/kmsg-bench.lock`, taken here
 * unless a parent process already holds it.
 */
import { rerunUnderLock } from './bench-lock.ts';
import { buildBundle } from './built-agent.ts';
import { containerBench } from './container.bench.ts';
import { depsBench } from './deps.bench.ts';
import { fleetBench } from './fleet.bench.ts';
import type { FleetBenchOptions } from './fleet-window.ts';
import { gpuBench } from './gpu.bench.ts';
import { idleBench } from './idle.bench.ts';
import { kmsgFlood } from './kmsg-flood.bench.ts';
import { journalAndFilelogRuleSets } from './log-rules.bench.ts';
import { longRecordReplayMs } from './long-records.bench.ts';
import { nodeBench } from './node.bench.ts';
import { loadNote } from './proc.ts';
import { processMetricsBench } from './process-metrics.bench.ts';
import {
  adversarialThroughAll,
  adversarialWorstCases,
  mixedLogNsPerLine,
  SHARED_KMSG_FILES,
} from './rule-engine.bench.ts';
import { scaleBench } from './scale.bench.ts';
import { stormBench } from './storm.bench.ts';
import { type VsNpdOptions, vsNpdBench } from './vs-npd.bench.ts';

const BENCHES = [
  'rules',
  'kmsg',
  'idle',
  'storm',
  'scale',
  'process',
  'vs-npd',
  'container',
  'node',
  'gpu',
] as const;
/** Benches run only when named: they need what CI does not have (the npm registry). */
const ON_REQUEST: readonly string[] = ['deps', 'fleet'];
/** The benches that write to /dev/kmsg at a high rate. */
const FLOODS: readonly string[] = ['kmsg', 'storm', 'vs-npd', 'container', 'node'];

function ruleEngine(): void {
  const mixed = mixedLogNsPerLine();
  console.log(`## Rule engine (shipped kmsg rules: ${SHARED_KMSG_FILES.join(', ')})`);
  console.log(
    `mixed kernel log: ${mixed.engines.toFixed(0)} ns/line over ${mixed.lines} lines, ${mixed.rules} rules, ${mixed.problems} results (target <= 200 ns/line; NPD Go ~1700 ns/line)`,
  );
  console.log(`  rule engines sharing one literal scan per line, batches of 64, as SourceHub feeds them`);
  console.log(
    `  whole monitor path (SourceHub, SystemLogMonitor, metrics, statuses): ${mixed.shared.toFixed(0)} ns/line`,
  );
  console.log(
    `  each engine scanning every line itself, as NPD's monitors do: ${mixed.alone.toFixed(0)} ns/line`,
  );
  for (const size of [64 * 1024, 8 * 1024]) {
    const all = adversarialThroughAll(size);
    console.log(
      `${size / 1024} KiB non-matching line through all ${mixed.rules} rules as the agent runs them (one shared scan, every engine): worst ${all.worstMs.toFixed(3)} ms, median ${all.medianMs.toFixed(3)} ms over ${all.lines} lines (${all.matching} matching shapes left out)${size === 64 * 1024 ? ' (target <= 5 ms)' : ', the largest /dev/kmsg record'}`,
    );
    console.log(`  worst line starts ${all.worst}`);
  }
  console.log(
    `replay --format kmsg, 16 records of 64 KiB with long space runs: ${longRecordReplayMs().toFixed(0)} ms (was 65-80 s)`,
  );
  const worst = adversarialWorstCases();
  const total = worst.reduce((s, w) => s + w.ms, 0);
  console.log(
    `64 KiB non-matching line, each rule alone in its own engine, worst of 5 adversarial shapes per rule:`,
  );
  for (const w of worst)
    console.log(`  ${w.ms.toFixed(3).padStart(8)} ms  ${w.reason.padEnd(30)} ${w.pattern}`);
  console.log(`  ${total.toFixed(3).padStart(8)} ms  sum over the rules alone (no rule shares any work)`);
  console.log(`  (${loadNote()})`);
  logRuleSets();
}

function logRuleSets(): void {
  console.log('## Rule engine (shipped journald and filelog rules, each file over its golden inputs)');
  console.log('  ns/line   64 KiB worst  rules  lines (distinct)  file  (slowest rule on the long line)');
  for (const t of journalAndFilelogRuleSets())
    console.log(
      `  ${t.nsPerLine.toFixed(0).padStart(7)}  ${t.worstMs.toFixed(3).padStart(9)} ms  ${String(t.rules).padStart(5)}  ${t.lines} (${t.distinct})  ${t.file} [${t.plugin}, ${t.results} results]  (${t.worstReason})`,
    );
}

function parseArgs(argv: readonly string[]): { names: string[]; opts: Map<string, string> } {
  const opts = new Map<string, string>();
  const names: string[] = [];
  for (const a of argv) {
    const m = /^--([\w-]+)=(.*)$/.exec(a);
    if (m) opts.set(m[1] as string, m[2] as string);
    else names.push(a);
  }
  if (names.includes('all')) return { names: [...BENCHES], opts };
  return { names: names.length > 0 ? names : ['rules'], opts };
}

function vsNpdOptions(opts: Map<string, string>): VsNpdOptions {
  const opt = (k: string, def: number) => Number(opts.get(k) ?? def);
  return {
    rates: (opts.get('rates') ?? '5000,20000,40000').split(',').map(Number),
    seconds: opt('seconds', 20),
    marks: opt('marks', 200),
    cpuRate: opt('cpu-rate', 2000),
    cpuSeconds: opt('cpu-seconds', 60),
    idleSeconds: opt('idle-seconds', 60),
    settleSeconds: opt('settle-seconds', 15),
    lifeIdleSeconds: opt('life-idle-seconds', 300),
    runs: opt('runs', 5),
    stormLines: opt('storm-lines', 10_000),
    stormSeconds: opt('storm-seconds', 10),
  };
}

function fleetOptions(opt: (k: string, def: number) => number): FleetBenchOptions {
  return {
    nodes: opt('nodes', 1000),
    workers: opt('workers', 2),
    heartbeatSeconds: opt('heartbeat', 300),
    rolloutSeconds: opt('rollout', 60),
    steadySeconds: opt('steady', 300),
    outageSeconds: opt('outage', 120),
    throttleSeconds: opt('throttle', 120),
  };
}

async function main(): Promise<void> {
  const { names, opts } = parseArgs(process.argv.slice(2));
  const known = [...BENCHES, ...ON_REQUEST];
  const unknown = names.filter((n) => !known.includes(n));
  if (unknown.length > 0)
    throw new Error(`unknown bench ${unknown.join(', ')}; choose from ${known.join(' ')} all`);
  if (names.some((n) => FLOODS.includes(n))) {
    const status = rerunUnderLock();
    if (status !== undefined) process.exit(status);
  }
  const opt = (k: string, def: number) => Number(opts.get(k) ?? def);
  const nodeFlags = (opts.get('node-flags') ?? '').split(',').filter(Boolean);
  if (names.some((n) => !['rules', 'scale', 'process', 'container', 'node', 'deps', 'fleet'].includes(n)))
    buildBundle();
  for (const name of names) {
    console.log(`\n# ${name} (${new Date().toISOString()}, node ${process.version}, ${loadNote()})`);
    if (name === 'rules') ruleEngine();
    if (name === 'kmsg')
      await kmsgFlood({
        rate: opt('rate', 20_000),
        seconds: opt('seconds', 60),
        marks: opt('marks', 600),
        nodeFlags,
        agentLog: opts.get('agent-log'),
      });
    if (name === 'idle') await idleBench({ seconds: opt('seconds', 60), sweep: opt('sweep', 1) !== 0 });
    if (name === 'storm') await stormBench({ lines: opt('lines', 10_000), seconds: opt('seconds', 10) });
    if (name === 'scale')
      await scaleBench({ nodes: opt('nodes', 200), heartbeatSeconds: opt('heartbeat', 10) });
    if (name === 'fleet') await fleetBench(fleetOptions(opt));
    if (name === 'process') await processMetricsBench({ scrapes: opt('scrapes', 2000) });
    if (name === 'gpu')
      await gpuBench({ polls: opt('polls', 2000), seconds: opt('seconds', 30), gpus: opt('gpus', 8) });
    if (name === 'deps') await depsBench({ runs: opt('runs', 7), dir: opts.get('dir') });
    if (name === 'vs-npd') await vsNpdBench(vsNpdOptions(opts));
    if (name === 'container')
      await containerBench({
        idleSeconds: opt('idle-seconds', 600),
        floodSeconds: opt('flood-seconds', 60),
        rate: opt('rate', 40_000),
        stormLines: opt('storm-lines', 10_000),
        stormSeconds: opt('storm-seconds', 10),
        memoryMiB: opt('memory-mib', 80),
      });
    if (name === 'node')
      await nodeBench({
        rate: opt('rate', 40_000),
        seconds: opt('seconds', 60),
        stormLines: opt('storm-lines', 200),
      });
  }
}

await main();
