/** Prints what the container bench watched (container-watch.ts), one block a phase and one overall. */
import type { ControlPlane } from '../e2e/harness/controlplane.ts';
import { sum } from './built-agent.ts';
import type { Snapshot, Span } from './container-watch.ts';
import { formatHealth } from './health-poll.ts';
import { mib } from './proc.ts';
import type { Counter } from './storm.bench.ts';

export interface Limits {
  readonly memoryBytes: number;
  /** The DaemonSet's resources.limits.cpu, e.g. "200m". */
  readonly cpu: string;
  readonly cpus: number;
}

/** The agent's own ServiceAccount, as the apiserver's audit log names it. */
export const SERVICE_ACCOUNT_USER = 'system:serviceaccount:kube-system:node-problem-detector';
/** The one kmsg reader reports under the first kmsg monitor's source (deploy/base: kernel.yaml). */
const READER = 'source="kernel-monitor"';

const MiB = 1024 * 1024;
const bytesMiB = (b: number) => (Number.isFinite(b) ? `${(b / MiB).toFixed(1)} MiB` : 'n/a');
const clock = (ms: number) => new Date(ms).toISOString().slice(11, 19);

/** A counter's growth from `from` to `to`; NaN when either /metrics scrape failed. */
export function delta(from: Snapshot, to: Snapshot): Counter {
  return (name, ...labels) =>
    from.metrics.size === 0 || to.metrics.size === 0
      ? Number.NaN
      : sum(to.metrics, name, ...labels) - sum(from.metrics, name, ...labels);
}

function memoryLines(s: Span, limits: Limits, agentPid: number): string[] {
  const { cg } = s.to;
  return [
    `memory (cgroup${s.to.cgGone ? ', gone with the container: its last reading' : ''}): peak ${bytesMiB(s.peakBytes)} of the ${bytesMiB(limits.memoryBytes)} limit (${s.peaks}); at the end ${bytesMiB(cg.memoryBytes)} (anon ${bytesMiB(cg.anonBytes)}, page cache ${bytesMiB(cg.fileBytes)}); OOM kills ${cg.oomKills - s.from.cg.oomKills} (container total ${cg.oomKills})`,
    // RssFile counts file pages (the node binary) that the page cache may have charged to another cgroup.
    `agent process (host pid ${agentPid}): VmRSS ${mib(s.to.rssKiB)} at the end (RssAnon ${mib(s.to.anonKiB)}, RssFile ${mib(s.to.fileKiB)}), VmHWM ${mib(s.hwmKiB)}`,
  ];
}

function cpuLine(s: Span, limits: Limits): string {
  const { from, to } = s;
  const wall = (to.at - from.at) / 1000;
  const cpu = (to.cg.cpuNs - from.cg.cpuNs) / 1e9;
  const periods = to.cg.periods - from.cg.periods;
  const throttled = to.cg.throttledPeriods - from.cg.throttledPeriods;
  const pct = periods > 0 ? ((100 * throttled) / periods).toFixed(1) : '0';
  return `CPU (cgroup): ${cpu.toFixed(2)} s over ${wall.toFixed(0)} s = ${((cpu / wall) * 1000).toFixed(1)} millicores (limit ${limits.cpu}); CFS throttled in ${throttled} of ${periods} periods (${pct}%), ${((to.cg.throttledNs - from.cg.throttledNs) / 1e9).toFixed(2)} s throttled`;
}

function recordsLine(s: Span): string {
  const d = delta(s.from, s.to);
  const [read, lost] = [d('npd_log_lines_read_total', READER), d('npd_kmsg_records_lost_total', READER)];
  return `kmsg: kernel sequence +${s.to.kmsgSeq - s.from.kmsgSeq} (every writer on the machine); agent read +${read}, lost +${lost} (npd_log_lines_read_total, npd_kmsg_records_lost_total; read+lost ${read + lost})`;
}

function eventsLine(s: Span): string {
  const d = delta(s.from, s.to);
  const w = (verb: string) => d('npd_events_written_total', `verb="${verb}"`);
  return `agent events (every source): recorded ${d('npd_events_recorded_total')}, spam-filtered ${d('npd_events_spam_filtered_total')}, dropped ${d('npd_events_dropped_total')}, written create ${w('create')} / patch ${w('patch')}`;
}

function apiLine(cp: ControlPlane, s: Span): string {
  const count = (resource: string, verb: string, subresource?: string) =>
    cp.countAudit({ user: SERVICE_ACCOUNT_USER, resource, verb, subresource }, s.from.mark);
  return `API writes (apiserver audit log, the agent's ServiceAccount): events create ${count('events', 'create')}, patch ${count('events', 'patch')}; nodes/status patch ${count('nodes', 'patch', 'status')}`;
}

export function printSpan(cp: ControlPlane, s: Span, limits: Limits, agentPid: number): void {
  const st = s.to.state;
  console.log(
    `### ${s.title}: ${((s.to.at - s.from.at) / 1000).toFixed(0)} s (${clock(s.from.at)}-${clock(s.to.at)} UTC)`,
  );
  console.log(formatHealth(s.health));
  for (const line of memoryLines(s, limits, agentPid)) console.log(line);
  console.log(cpuLine(s, limits));
  console.log(recordsLine(s));
  console.log(eventsLine(s));
  console.log(apiLine(cp, s));
  console.log(
    `podman inspect: ${st.status}, OOMKilled ${st.oomKilled}, ExitCode ${st.exitCode}, Restarts ${st.restarts}`,
  );
  console.log(`(start ${s.from.load}; end ${s.to.load})`);
}
