import { z } from 'zod';
import { NVML, type Nvml, NvmlError } from '../../../host/nvml/api.ts';
import type { CheckResult, Gpu, GpuCheck, GpuFinding } from '../check.ts';
import { describeGpu } from '../identity.ts';

/**
 * NVLink links that went down. Every link id 0..NVML_NVLINK_MAX_LINKS-1 is asked with
 * nvmlDeviceGetNvLinkState; NOT_SUPPORTED and INVALID_ARGUMENT mean there is no such link (a PCIe H200
 * without NVLink peers answers NOT_SUPPORTED on every link: gpu.md section 0; DCGM's cache manager treats
 * every error there as "not supported" because Pascal answers INVALID_ARGUMENT for links Volta has:
 * NVIDIA/DCGM dcgmlib/src/DcgmCacheManager.cpp UpdateNvLinkLinkState).
 *
 * What counts as evidence. DCGM calls every link NVML answers DISABLED "Down" and fails the NVLINK watch
 * (DcgmHealthWatch.cpp MonitorNVLink, DCGM_FR_NVLINK_DOWN = FAIL), except when any GPU is in MIG mode:
 * "NVML reports links to MIG enabled GPUs as down" (same function, bug 200682374). A GPU whose links are
 * all inactive is therefore no evidence by itself: MIG mode, a fabric the Fabric Manager has not trained
 * yet (fabric.ts judges that), or a board without its bridge all look alike. Two shapes are evidence:
 *  - a link this agent saw active and now reads inactive (the link dropped while the GPU stayed up);
 *  - a link inactive while other links of the same GPU are active (the GPU's NVLink is trained, this
 *    link is not).
 * Either is fatal with the EKS agent's reason NvidiaNVLinkError (aws/eks-node-monitoring-agent
 * pkg/reasons: Fatal), as DCGM's FAIL and NVSentinel's RESTART_VM for NVLINK_DOWN (gpu.md section 3).
 * A peer GPU switched to MIG mode can make a link read inactive beside active ones; the Nvml interface
 * does not read the MIG mode yet, so `downAmongActive: false` turns that shape off where MIG is used.
 */

/** NVML_NVLINK_MAX_LINKS in NVML API 13 (NVIDIA/go-nvml gen/nvml/nvml.h). */
export const NVML_NVLINK_MAX_LINKS = 36;

export const nvlinkOptions = z.strictObject({
  downAfterActive: z.boolean().default(true),
  downAmongActive: z.boolean().default(true),
});

export type NvlinkOptions = z.infer<typeof nvlinkOptions>;

export const NVLINK_DEFAULTS: NvlinkOptions = nvlinkOptions.parse({});

export interface NvlinkState {
  /** Links seen active since the agent started (or NVML came back). */
  readonly seenActive: Set<number>;
  /**
   * Link ids that answered NOT_SUPPORTED or INVALID_ARGUMENT: no such link on this GPU, which does not
   * change while the driver stays loaded (a re-init starts a fresh state). Not asked again, so a PCIe GPU
   * costs 36 calls once instead of 36 every poll (BENCHMARKS.md i: 288 of 393 calls per poll for 8 GPUs).
   */
  readonly absent: Set<number>;
}

interface Links {
  readonly active: number[];
  readonly inactive: number[];
}

export const nvlinkCheck: GpuCheck<NvlinkOptions, NvlinkState> = {
  name: 'nvlink',
  scope: 'gpu',
  options: nvlinkOptions,
  reasons: { fatal: ['NvidiaNVLinkError'] },
  initialState: () => ({ seenActive: new Set<number>(), absent: new Set<number>() }),
  run(ctx, gpu, state) {
    if (gpu === undefined) return { findings: [] };
    const links = readLinks(ctx.nvml, gpu, state.absent);
    if (links instanceof NvmlError) return { findings: [], error: links };
    const result = judge(gpu, links, state, ctx.options);
    for (const link of links.active) state.seenActive.add(link);
    return result;
  },
};

function readLinks(nvml: Nvml, gpu: Gpu, absent: Set<number>): Links | NvmlError {
  const links: Links = { active: [], inactive: [] };
  for (let link = 0; link < NVML_NVLINK_MAX_LINKS; link++) {
    if (absent.has(link)) continue;
    const active = nvml.nvLinkActive(gpu.handle, link);
    if (active instanceof NvmlError) {
      if (active.code !== NVML.NOT_SUPPORTED && active.code !== NVML.INVALID_ARGUMENT) return active;
      absent.add(link);
      continue;
    }
    (active ? links.active : links.inactive).push(link);
  }
  return links;
}

function judge(gpu: Gpu, links: Links, state: NvlinkState, o: NvlinkOptions): CheckResult {
  const dropped = o.downAfterActive ? links.inactive.filter((l) => state.seenActive.has(l)) : [];
  const beside =
    o.downAmongActive && links.active.length > 0 ? links.inactive.filter((l) => !dropped.includes(l)) : [];
  const parts: string[] = [];
  if (dropped.length > 0)
    parts.push(`${plural(dropped)} ${dropped.join(', ')} went inactive after being active`);
  if (beside.length > 0) {
    parts.push(
      `${plural(beside)} ${beside.join(', ')} inactive while ${links.active.length} others are active`,
    );
  }
  const gauges = { nvlink_links_active: links.active.length, nvlink_links_inactive: links.inactive.length };
  if (parts.length === 0) return { findings: [], gauges };
  const finding: GpuFinding = {
    check: 'nvlink',
    severity: 'fatal',
    reason: 'NvidiaNVLinkError',
    message: `${describeGpu(gpu)}: NVLink ${parts.join('; ')}`,
    gpu,
  };
  return { findings: [finding], gauges };
}

function plural(links: readonly number[]): string {
  return links.length === 1 ? 'link' : 'links';
}
