import { z } from 'zod';
import { NvmlError } from '../../../host/nvml/api.ts';
import type { Gpu, GpuCheck, GpuFinding } from '../check.ts';
import { describeGpu } from '../identity.ts';
import { unanswered } from './ecc.ts';

/** The EKS node monitoring agent's reason for page retirement (MaxRtPgPolicy, a Warning event). */
export const PAGE_RETIREMENT = 'NvidiaPageRetirement';
export const PAGE_RETIREMENT_LIMIT = 'NvidiaPageRetirementLimit';

/**
 * `limit`: 63 pages retired for SBE and DBE together, DCGM's failure limit (NVIDIA/DCGM
 * common/DcgmGPUHardwareLimits.h, DcgmHealthWatch.cpp MEM watch: retired SBE+DBE >= 63 = FAIL).
 */
export const retiredPagesOptions = z.strictObject({
  limit: z.number().int().min(1).default(63),
});
export type RetiredPagesOptions = z.infer<typeof retiredPagesOptions>;

/**
 * Dynamic page retirement (Kepler to Turing, and Volta-era data-center parts; nvmlDeviceGetRetiredPages
 * and nvmlDeviceGetRetiredPagesPendingStatus). A page waiting to be retired at the next driver load is a
 * warning (DCGM WARN; NVSentinel NONE); the limit reached is fatal: the GPU is out of spare pages.
 * Ampere and newer remap rows instead and answer NOT_SUPPORTED (the H200 of gpu.md section 0): no finding.
 */
export const retiredPagesCheck: GpuCheck<RetiredPagesOptions, null> = {
  name: 'retired-pages',
  scope: 'gpu',
  options: retiredPagesOptions,
  reasons: { fatal: [PAGE_RETIREMENT_LIMIT], warning: [PAGE_RETIREMENT] },
  initialState: () => null,
  run(ctx, gpu) {
    if (!gpu) return { findings: [] };
    const sbe = ctx.nvml.retiredPages(gpu.handle, 0);
    if (sbe instanceof NvmlError) return unanswered(sbe);
    const dbe = ctx.nvml.retiredPages(gpu.handle, 1);
    if (dbe instanceof NvmlError) return unanswered(dbe);
    const pending = ctx.nvml.retiredPagesPending(gpu.handle);
    if (pending instanceof NvmlError) return unanswered(pending);
    const findings: GpuFinding[] = [];
    const counts = `${sbe} pages retired for multiple single-bit errors and ${dbe} for double-bit errors`;
    if (sbe + dbe >= ctx.options.limit) {
      findings.push(
        finding(
          gpu,
          'fatal',
          PAGE_RETIREMENT_LIMIT,
          `${counts}, at or above ${ctx.options.limit}; replace the GPU`,
        ),
      );
    }
    if (pending)
      findings.push(
        finding(
          gpu,
          'warning',
          PAGE_RETIREMENT,
          `a page retirement is pending (${counts}); it applies at the next driver load`,
        ),
      );
    const gauges = { retired_pages_sbe: sbe, retired_pages_dbe: dbe, retired_pages_pending: pending ? 1 : 0 };
    return { findings, gauges };
  },
};

function finding(gpu: Gpu, severity: 'fatal' | 'warning', reason: string, what: string): GpuFinding {
  return { check: 'retired-pages', severity, reason, message: `${describeGpu(gpu)}: ${what}`, gpu };
}
