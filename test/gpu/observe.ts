/**
 * What the agent showed of one Xid through each path: the kernel-log rules (rules/gpu.yaml over
 * /dev/kmsg) and the NVML monitor's event wait. The agent passes one event per Xid occurrence, whichever
 * source is first (src/events/xid-once.ts); the other source's report is dropped and counted in
 * npd_gpu_xid_duplicates_total{source}, so "seen" is: an event from that source, or a duplicate of it.
 */
import type { LogRecord } from './agent.ts';
import type { FaultOutcome } from './fault.ts';

export type Samples = ReadonlyMap<string, number>;

/** The `source` of each path's monitor, as their config files name them. */
export interface PathSources {
  readonly kernel: string;
  readonly nvml: string;
}

export interface PathView {
  readonly seen: boolean;
  readonly detail: string;
}

export interface XidView {
  readonly fault: FaultOutcome;
  readonly kernel: PathView;
  readonly nvml: PathView;
}

/** Every sample of a Prometheus text page, by series as printed (`name{labels}`). */
export async function scrape(url: string): Promise<Samples> {
  const text = await (await fetch(url)).text();
  const out = new Map<string, number>();
  for (const line of text.split('\n')) {
    if (line === '' || line.startsWith('#')) continue;
    const cut = line.lastIndexOf(' ');
    out.set(line.slice(0, cut), Number(line.slice(cut + 1)));
  }
  return out;
}

/** Sum of the series of `name` carrying every one of `labels`. */
export function total(samples: Samples, name: string, labels: Readonly<Record<string, string>> = {}): number {
  const wanted = Object.entries(labels).map(([k, v]) => `${k}="${v}"`);
  let sum = 0;
  for (const [series, value] of samples) {
    if (series.split('{', 1)[0] !== name) continue;
    if (wanted.every((l) => series.includes(l))) sum += value;
  }
  return sum;
}

const delta = (before: Samples, after: Samples, name: string, labels: Record<string, string>): number =>
  total(after, name, labels) - total(before, name, labels);

/**
 * The event the agent logged for this Xid from `source`, logged after the fault began; the kernel line
 * also names the faulting pid, so an older Xid of the same code in the replayed lookback is not taken.
 */
function eventFrom(
  records: readonly LogRecord[],
  source: string,
  fault: FaultOutcome,
  pid: number | null,
): LogRecord | undefined {
  return records.find(
    (r) =>
      r.msg === 'Event occurred' &&
      r.source === source &&
      r.reason === `NVRMXid${fault.xid}` &&
      Date.parse(String(r.time)) >= fault.startedAt &&
      (pid === null || String(r.message).includes(`pid=${pid}`)),
  );
}

function evidence(r: LogRecord): string {
  const a = r.annotations as Record<string, string> | undefined;
  return a?.['node-problem-detector.io/evidence'] ?? 'none';
}

function kernelView(
  fault: FaultOutcome,
  before: Samples,
  after: Samples,
  records: readonly LogRecord[],
  s: PathSources,
): PathView {
  const event = eventFrom(records, s.kernel, fault, fault.pid);
  if (event)
    return {
      seen: true,
      detail: `event ${event.reason} first (evidence ${evidence(event)}): ${String(event.message)}`,
    };
  const dropped = delta(before, after, 'npd_gpu_xid_duplicates_total', { source: s.kernel });
  if (dropped > 0)
    return { seen: true, detail: `matched NVRMXid${fault.xid}; dropped as the Xid NVML reported first` };
  const read = delta(before, after, 'npd_log_lines_read_total', { source: s.kernel });
  // The driver may name the fault otherwise than the H200 did (another Xid for the same pid): say which.
  const other = records
    .filter((r) => r.msg === 'Event occurred' && Date.parse(String(r.time)) >= fault.startedAt)
    .filter((r) => fault.pid !== null && String(r.message).includes(`pid=${fault.pid}`))
    .map((r) => String(r.reason));
  const instead = other.length > 0 ? `; events for that pid: ${other.join(', ')}` : '';
  return {
    seen: false,
    detail: `no NVRMXid${fault.xid} line with pid=${fault.pid} (${read} kernel records read meanwhile${instead})`,
  };
}

function nvmlView(
  fault: FaultOutcome,
  before: Samples,
  after: Samples,
  records: readonly LogRecord[],
  s: PathSources,
): PathView {
  const events = delta(before, after, 'npd_gpu_nvml_events_total', { source: s.nvml, type: 'xid' });
  if (events === 0) return { seen: false, detail: 'no XidCriticalError event from nvmlEventSetWait_v2' };
  const event = eventFrom(records, s.nvml, fault, null);
  const dropped = delta(before, after, 'npd_gpu_xid_duplicates_total', { source: s.nvml });
  const then = event
    ? `event ${event.reason} first (evidence ${evidence(event)}): ${String(event.message)}`
    : dropped > 0
      ? `dropped as the Xid the kernel log reported first`
      : 'no event logged for it';
  return { seen: true, detail: `${events} XidCriticalError event(s); ${then}` };
}

/** Both paths' views of one fault, from the scrapes around it and the agent's log. */
export function xidView(
  fault: FaultOutcome,
  before: Samples,
  after: Samples,
  records: readonly LogRecord[],
  sources: PathSources,
): XidView {
  return {
    fault,
    kernel: kernelView(fault, before, after, records, sources),
    nvml: nvmlView(fault, before, after, records, sources),
  };
}
