import { z } from 'zod';
import { NVML, type Nvml, NvmlError } from '../../../host/nvml/api.ts';
import type { Gpu, GpuCheck, GpuFinding } from '../check.ts';
import { describeGpu } from '../identity.ts';

/**
 * The GPU's PCIe link: trained below what the device and the slot allow, and the replay counter's rate.
 * Both are warnings. Replays take the EKS agent's reason NvidiaPCIeError (aws/eks-node-monitoring-agent
 * pkg/reasons: Warning; its DCGM PCIe policy reports "detected N PCIe replays"), as DCGM's PCIE watch gives
 * WARN for the replay rate (DcgmHealthWatch.cpp MonitorPcie, DCGM_FR_PCI_REPLAY_RATE). Neither judges the
 * width, so a degraded link has its own reason (ours): a warning's event is sent once per check, GPU and
 * reason, and the two are different faults.
 */
export const PCIE_REPLAYS = 'NvidiaPCIeError';
export const PCIE_LINK_DEGRADED = 'NvidiaPCIeLinkDegraded';

/**
 * Allowed replays per lane per minute by link generation (index 0 = Gen1), DCGM's table in
 * NVIDIA/DCGM modules/health/DcgmHealthWatch.cpp GetExpectedPcieReplayRate: a bit error rate of 1e-12 at
 * the lane speed (2.5, 5, 8, 16, 32, 64 Gbps) over 60 s. DCGM allows ceil(rate x current lanes) replays in
 * one minute and caps a newer generation at the last entry; so does this check.
 */
export const DCGM_REPLAYS_PER_LANE_PER_MINUTE = [0.15, 0.3, 0.48, 0.96, 1.92, 3.84] as const;

/** DCGM judges the replays of the last minute; a shorter poll is measured as if it lasted one minute. */
export const REPLAY_WINDOW_MS = 60_000;

/** The clock event reason GpuIdle (nvml.h): "Nothing is running on the GPU". */
const GPU_IDLE = 0x1;

export const pcieOptions = z.strictObject({
  /**
   * Width or generation below the maximum, judged only under load: nvidia-smi(1) says of the current
   * link generation and width "These may be reduced when the GPU is not in use", so a poll where the
   * clock event reasons include GpuIdle (or do not answer) is not judged. The maxima are what "this
   * device and system" allow (nvml.h nvmlDeviceGetMaxPcieLinkGeneration/Width), so a Gen4 slot under a
   * Gen5 GPU is no finding.
   */
  linkDegraded: z.boolean().default(true),
  /** Consecutive loaded polls with the link below its maximum before the warning: a link retrains to
   * full speed within moments of the load arriving, so one sample right after idle is no evidence. */
  degradedPolls: z.number().int().min(1).default(2),
  replayRate: z.boolean().default(true),
  replaysPerLanePerMinute: z
    .array(z.number().nonnegative())
    .min(1)
    .default([...DCGM_REPLAYS_PER_LANE_PER_MINUTE]),
});

export type PcieOptions = z.infer<typeof pcieOptions>;

export const PCIE_DEFAULTS: PcieOptions = pcieOptions.parse({});

export interface PcieState {
  /** Loaded polls in a row with the link below its maximum. */
  degradedStreak: number;
  /** The replay counter at the previous poll. */
  lastReplay?: { readonly count: number; readonly at: number };
}

interface Link {
  readonly width: { readonly current: number; readonly max: number };
  readonly gen: { readonly current: number; readonly max: number };
}

interface Reading {
  readonly link?: Link;
  /** True or false when the clock event reasons answered; undefined when the GPU or driver cannot say. */
  readonly idle?: boolean;
  readonly replays?: number;
}

export const pcieCheck: GpuCheck<PcieOptions, PcieState> = {
  name: 'pcie',
  scope: 'gpu',
  options: pcieOptions,
  reasons: { warning: [PCIE_LINK_DEGRADED, PCIE_REPLAYS] },
  initialState: () => ({ degradedStreak: 0 }),
  run(ctx, gpu, state) {
    if (gpu === undefined) return { findings: [] };
    const reading = read(ctx.nvml, gpu);
    if (reading instanceof NvmlError) return { findings: [], error: reading };
    const findings: GpuFinding[] = [];
    const link = linkFinding(gpu, reading, state, ctx.options);
    if (link) findings.push(link);
    const replay = replayFinding(gpu, reading, state, ctx.options, ctx.now);
    if (replay.finding) findings.push(replay.finding);
    return { findings, gauges: gauges(reading, replay.perMinute) };
  },
};

/**
 * Every value the check uses; NOT_SUPPORTED leaves one out, any other error is the answer. The clock
 * event reasons' FUNCTION_NOT_FOUND (a driver older than the call) leaves idleness unknown too, as
 * throttle.ts's gauge shows.
 */
function read(nvml: Nvml, gpu: Gpu): Reading | NvmlError {
  const width = nvml.pcieWidth(gpu.handle);
  const gen = nvml.pcieGeneration(gpu.handle);
  const reasons = nvml.clocksEventReasons(gpu.handle);
  const replays = nvml.pcieReplayCounter(gpu.handle);
  for (const answer of [width, gen, reasons, replays]) {
    if (!(answer instanceof NvmlError) || answer.code === NVML.NOT_SUPPORTED) continue;
    if (answer !== reasons || answer.code !== NVML.FUNCTION_NOT_FOUND) return answer;
  }
  const link = width instanceof NvmlError || gen instanceof NvmlError ? undefined : { width, gen };
  return {
    ...(link ? { link } : {}),
    ...(reasons instanceof NvmlError ? {} : { idle: (reasons & GPU_IDLE) !== 0 }),
    ...(replays instanceof NvmlError ? {} : { replays }),
  };
}

function linkFinding(gpu: Gpu, r: Reading, state: PcieState, o: PcieOptions): GpuFinding | undefined {
  const link = r.link;
  const degraded =
    link !== undefined && (link.width.current < link.width.max || link.gen.current < link.gen.max);
  // Idle, or idleness unknown: the link may be down-trained on purpose, so the streak starts over.
  state.degradedStreak = degraded && r.idle === false ? state.degradedStreak + 1 : 0;
  if (!o.linkDegraded || link === undefined || state.degradedStreak < o.degradedPolls) return undefined;
  return {
    check: 'pcie',
    severity: 'warning',
    reason: PCIE_LINK_DEGRADED,
    message:
      `${describeGpu(gpu)}: PCIe link at Gen${link.gen.current} x${link.width.current} under load, ` +
      `below its maximum Gen${link.gen.max} x${link.width.max} (${state.degradedStreak} polls in a row)`,
    gpu,
  };
}

function replayFinding(
  gpu: Gpu,
  r: Reading,
  state: PcieState,
  o: PcieOptions,
  now: number,
): { finding?: GpuFinding; perMinute?: number } {
  if (r.replays === undefined) return {};
  const last = state.lastReplay;
  state.lastReplay = { count: r.replays, at: now };
  // The first poll only sets the baseline; a smaller count means the driver reloaded and reset it.
  if (last === undefined || r.replays < last.count || now <= last.at) return {};
  const perMinute = ((r.replays - last.count) * 60_000) / Math.max(now - last.at, REPLAY_WINDOW_MS);
  if (!o.replayRate || r.link === undefined) return { perMinute };
  const limit = allowedReplays(r.link, o.replaysPerLanePerMinute);
  if (perMinute <= limit) return { perMinute };
  const message =
    `${describeGpu(gpu)}: ${r.replays - last.count} PCIe replays since the last poll ` +
    `(${round(perMinute)} per minute), above the ${limit} per minute allowed at ` +
    `Gen${r.link.gen.current} x${r.link.width.current}; replay counter ${r.replays}`;
  return {
    perMinute,
    finding: { check: 'pcie', severity: 'warning', reason: PCIE_REPLAYS, message, gpu },
  };
}

/** DCGM's expected replays per minute: the per-lane rate of the current generation times the lanes. */
export function allowedReplays(link: Link, perLane: readonly number[]): number {
  const gen = Math.min(Math.max(link.gen.current, 1), perLane.length);
  return Math.ceil((perLane[gen - 1] ?? 0) * link.width.current);
}

function gauges(r: Reading, perMinute: number | undefined): Record<string, number> {
  const g: Record<string, number> = {};
  if (r.link) {
    g.pcie_link_width = r.link.width.current;
    g.pcie_link_width_max = r.link.width.max;
    g.pcie_link_gen = r.link.gen.current;
    g.pcie_link_gen_max = r.link.gen.max;
  }
  if (r.replays !== undefined) g.pcie_replay_counter = r.replays;
  if (perMinute !== undefined) g.pcie_replays_per_minute = perMinute;
  return g;
}

function round(n: number): number {
  return Math.round(n * 100) / 100;
}
