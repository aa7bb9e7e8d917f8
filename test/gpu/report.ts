/**
 * The table test:gpu prints: per Xid what each path saw, /conditions, the GPU lines of /metrics, and every
 * NVML check's answer per GPU. Plain text, one section per part, for a terminal and for BENCHMARKS.md.
 */
import type { XidView } from './observe.ts';
import type { ProbeReport, ProbeSlot } from './probe-report.ts';

export interface Condition {
  readonly type: string;
  readonly status: string;
  readonly reason: string;
  readonly message: string;
}

const mark = (seen: boolean): string => (seen ? 'SEEN    ' : 'NOT SEEN');

export function xidSection(views: readonly XidView[]): string[] {
  const out: string[] = [];
  for (const v of views) {
    const f = v.fault;
    if (f.way === null) {
      out.push(`-- Xid ${f.xid}: NOT MADE: ${(f.unavailable ?? []).join('; ')}`);
      continue;
    }
    out.push(
      `-- Xid ${f.xid}: made by ${f.way} (pid ${f.pid ?? '?'}): ${f.error ?? 'no CUDA error: the kernel did not fault'}`,
    );
    out.push(`   kernel log  ${mark(v.kernel.seen)}  ${v.kernel.detail}`);
    out.push(`   NVML        ${mark(v.nvml.seen)}  ${v.nvml.detail}`);
  }
  return out;
}

export function conditionSection(conditions: readonly Condition[]): string[] {
  const out = ['-- /conditions'];
  const width = Math.max(0, ...conditions.map((c) => c.type.length));
  for (const c of conditions)
    out.push(`   ${c.type.padEnd(width)}  ${c.status.padEnd(7)}  ${c.reason}: ${c.message}`);
  if (conditions.length === 0) out.push('   (none)');
  return out;
}

/**
 * Series that are zero by construction (a series per catalog Xid code, per rule, per check and reason)
 * are left out when zero; the rest are printed, the per-GPU gauges one line per GPU.
 */
const ZERO_QUIET = new Set([
  'npd_gpu_xid_total',
  'npd_gpu_findings',
  'npd_gpu_nvml_errors_total',
  'npd_gpu_xid_unparsed_total',
  'npd_gpu_xid_duplicates_total',
  'npd_gpu_nvml_events_total',
  'problem_gauge',
]);

const nameOf = (series: string): string => series.split('{', 1)[0] as string;

function gpuSeries(series: string, sources: readonly string[]): boolean {
  const name = nameOf(series);
  if (name.startsWith('npd_gpu_')) return true;
  if (name === 'problem_counter') return /reason="NVRMXid(31|43)"/.test(series);
  if (name === 'problem_gauge') return series.includes('type="GPUUnhealthy"');
  return name.startsWith('npd_monitor_') && sources.some((s) => series.includes(`source="${s}"`));
}

/** A per-GPU value gauge (npd_gpu_<value>{source,gpu,uuid,pci_bus_id}): its GPU's labels and its value name. */
function perGpu(series: string): { gpu: string; name: string } | undefined {
  const m = /^npd_gpu_(\w+)\{source="[^"]*",(gpu="\d+",uuid="[^"]*",pci_bus_id="[^"]*")\}$/.exec(series);
  return m ? { gpu: m[2] as string, name: m[1] as string } : undefined;
}

export function metricsSection(samples: ReadonlyMap<string, number>, sources: readonly string[]): string[] {
  const out = ['-- /metrics (GPU lines)'];
  const gpus = new Map<string, string[]>();
  let quiet = 0;
  for (const [series, value] of samples) {
    if (!gpuSeries(series, sources)) continue;
    const g = perGpu(series);
    if (g) gpus.set(g.gpu, [...(gpus.get(g.gpu) ?? []), `${g.name}=${value}`]);
    else if (value === 0 && ZERO_QUIET.has(nameOf(series))) quiet += 1;
    else out.push(`   ${series} ${value}`);
  }
  for (const [gpu, values] of gpus) out.push(`   npd_gpu_*{${gpu}}: ${values.join(' ')}`);
  out.push(`   (${quiet} zero series of ${[...ZERO_QUIET].join(', ')} left out)`);
  return out;
}

function slotLine(s: ProbeSlot): string {
  const gauges = Object.entries(s.gauges)
    .map(([k, v]) => `${k}=${v}`)
    .join(' ');
  const verdict = s.error
    ? `no verdict: ${s.error}`
    : s.findings.length === 0
      ? 'ok'
      : s.findings.map((f) => `${f.severity} ${f.reason}: ${f.message}`).join(' | ');
  return `     ${s.check.padEnd(16)} ${verdict}${gauges ? `  [${gauges}]` : ''}`;
}

export function checksSection(probe: ProbeReport): string[] {
  const out = ["-- NVML checks (one poll through the agent's binding and checks)"];
  if (probe.state !== 'ready') return [...out, `   ${probe.state}: ${probe.why}`];
  out.push(
    `   driver ${probe.driver}; NVML GPUs ${probe.gpus.length}, on the PCI bus ${probe.onBus ?? 'unknown'}`,
  );
  if (probe.lost.length > 0) out.push(`   lost at start (GPU_IS_LOST): ${probe.lost.join(', ')}`);
  if (probe.disabled.length > 0) out.push(`   disabled by the config: ${probe.disabled.join(', ')}`);
  const node = probe.slots.filter((s) => s.gpu === null);
  if (node.length > 0) out.push('   node', ...node.map(slotLine));
  for (const g of probe.gpus) {
    out.push(`   GPU ${g.index} ${g.name} ${g.busId} ${g.uuid}`);
    out.push(...probe.slots.filter((s) => s.gpu === g.index).map(slotLine));
  }
  return out;
}
