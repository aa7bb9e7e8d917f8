/**
 * kmsg flood end to end: the bundled agent (standalone, the DaemonSet's kernel.yaml + readonly.yaml, a
 * marker rule added to kernel.yaml) reads the real /dev/kmsg while a separate writer process floods it
 * at a steady rate with marked problem lines spread through. Prints what the agent cost, what it lost
 * (by its own count and by the kernel's sequence numbers) and whether every marked line it read was
 * detected and counted exactly once.
 */
import { randomBytes } from 'node:crypto';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { REPO } from '../support/agent-process.ts';
import { type BuiltAgent, scrape, startBuilt, sum } from './built-agent.ts';
import { lastKmsgSeq } from './kmsg-seq.ts';
import { runWriter, type WriterSummary } from './kmsg-writer.ts';
import { formatUsage, loadNote, measure, mib, statusKiB, type Usage } from './proc.ts';

export interface FloodOptions {
  readonly rate: number;
  readonly seconds: number;
  readonly marks: number;
  /** Node/V8 flags for the agent, e.g. --max-semi-space-size=1. */
  readonly nodeFlags?: readonly string[];
  /** Extra environment for the agent, e.g. MALLOC_ARENA_MAX. */
  readonly env?: NodeJS.ProcessEnv;
  /** Write the tail of the agent's output here (e.g. its --trace-gc lines). */
  readonly agentLog?: string;
}

const REASON = 'BenchMarker';

/** A kernel.yaml text with a temporary rule for the writer's marked lines appended to its rules list. */
export function withMarkerRule(kernelYaml: string, marker: string, reason: string): string {
  // kernel.yaml ends with its rules list, so an appended rule joins it.
  const rule = [
    '  - type: temporary',
    `    reason: ${reason}`,
    `    pattern: '${marker}: marker problem #\\d+'`,
  ];
  return `${kernelYaml.trimEnd()}\n${rule.join('\n')}\n`;
}

function configs(dir: string, marker: string): string[] {
  const noLookback = (name: string) =>
    readFileSync(join(REPO, 'rules', name), 'utf8').replace(/^lookback: .*$/m, 'lookback: 0s');
  const kernel = join(dir, 'kernel.yaml');
  writeFileSync(kernel, withMarkerRule(noLookback('kernel.yaml'), marker, REASON));
  const readonly = join(dir, 'readonly.yaml');
  writeFileSync(readonly, noLookback('readonly.yaml'));
  return [kernel, readonly];
}

/** The marked lines the agent turned into events, from its structured "Event occurred" log lines. */
function detectedMarks(agent: BuiltAgent, marker: string): { unique: number; duplicates: number } {
  const seen = new Map<string, number>();
  const re = new RegExp(`"message":"${marker}: marker problem #(\\d+)"`, 'g');
  for (const m of agent.output().matchAll(re)) seen.set(m[1] as string, (seen.get(m[1] as string) ?? 0) + 1);
  let duplicates = 0;
  for (const n of seen.values()) duplicates += n - 1;
  return { unique: seen.size, duplicates };
}

export async function kmsgFlood(opts: FloodOptions): Promise<void> {
  const dir = mkdtempSync(join(tmpdir(), 'npd-bench-kmsg-'));
  const marker = `npdbench${randomBytes(4).toString('hex')}`;
  const agent = await startBuilt(
    ['--enable-k8s-exporter=false', `--config.system-log-monitor=${configs(dir, marker).join(',')}`],
    { nodeFlags: opts.nodeFlags ?? [], env: opts.env },
  );
  try {
    await new Promise((r) => setTimeout(r, 5000));
    const seq0 = lastKmsgSeq();
    const m0 = await scrape(agent.metricsUrl);
    const writer = runWriter(opts, marker);
    const usage = await measure(agent.pid, opts.seconds * 1000);
    const w = await writer;
    // Let the agent drain what is left (at most one poll interval plus the backlog).
    await new Promise((r) => setTimeout(r, 3000));
    const seq1 = lastKmsgSeq();
    const m1 = await scrape(agent.metricsUrl);
    report(opts, w, usage, agent, marker, { seq0, seq1, m0, m1 });
  } finally {
    if (opts.agentLog) writeFileSync(opts.agentLog, agent.output());
    await agent.stop();
    rmSync(dir, { recursive: true, force: true });
  }
}

interface Readings {
  seq0: number;
  seq1: number;
  m0: Map<string, number>;
  m1: Map<string, number>;
}

function report(
  opts: FloodOptions,
  w: WriterSummary,
  usage: Usage,
  agent: BuiltAgent,
  marker: string,
  r: Readings,
): void {
  const d = (name: string, ...labels: string[]) => sum(r.m1, name, ...labels) - sum(r.m0, name, ...labels);
  const kernelRecords = r.seq1 - r.seq0;
  const src = 'source="kernel-monitor"';
  const read = d('npd_log_lines_read_total', src);
  const lost = d('npd_kmsg_records_lost_total', src);
  const counted = d('problem_counter', `reason="${REASON}"`);
  const marks = detectedMarks(agent, marker);
  const env = Object.entries(opts.env ?? {}).map(([k, v]) => `${k}=${v}`);
  const flags = [...env, ...(opts.nodeFlags ?? [])].join(' ');
  console.log(
    `## kmsg flood: ${opts.rate} lines/s for ${opts.seconds} s, ${opts.marks} marked lines${flags ? `, agent ${flags}` : ''}`,
  );
  console.log(
    `writer: ${w.written} lines (${w.marks} marked) in ${w.seconds.toFixed(1)} s = ${w.achievedRate.toFixed(0)} lines/s, ${w.opens} opens of /dev/kmsg, ${w.writeErrors} write errors`,
  );
  console.log(`kernel: sequence numbers advanced by ${kernelRecords} (every writer on the machine)`);
  console.log(`agent (bundle): ${formatUsage(usage)}`);
  console.log(`agent VmHWM at the end (reset as the flood started) ${mib(statusKiB(agent.pid, 'VmHWM'))}`);
  // Both monitors share one reader (SourceHub), which reports under the first monitor's source.
  for (const s of ['kernel-monitor', 'readonly-monitor']) {
    const l = `source="${s}"`;
    const [sRead, sLost] = [d('npd_log_lines_read_total', l), d('npd_kmsg_records_lost_total', l)];
    const evaluated = d('npd_log_lines_evaluated_total', l);
    console.log(
      `  ${s}: reader read ${sRead}, lost ${sLost}, read+lost ${sRead + sLost} vs kernel ${kernelRecords}; lines evaluated by its rules ${evaluated}`,
    );
  }
  console.log(
    `  marked lines: written ${w.marks}; problem_counter{reason="${REASON}"} +${counted}; distinct marked lines in the event log ${marks.unique}, logged twice ${marks.duplicates}`,
  );
  console.log(
    `  missing marked lines ${w.marks - counted} (expected from the loss rate: ${((w.marks * lost) / Math.max(1, read + lost)).toFixed(0)}); every missing one within the counted losses: ${w.marks - counted <= lost}; counted == detected: ${counted === marks.unique}`,
  );
  console.log(`  (${loadNote()})`);
}
