import { NVML, NvmlError } from '../../../host/nvml/api.ts';
import type { CheckResult, Gpu, GpuCheck } from '../check.ts';
import { describeGpu } from '../identity.ts';

/** The EKS node monitoring agent's fatal reason for a DBE (pkg/reasons/reasons.yaml, DbePolicy). */
export const DOUBLE_BIT_ERROR = 'NvidiaDoubleBitError';

/**
 * Volatile uncorrectable ECC errors (nvmlDeviceGetTotalEccErrors, UNCORRECTED, VOLATILE: since the
 * driver loaded): any is fatal, as DCGM's MEM watch fails on a volatile DBE (NVIDIA/DCGM
 * modules/health/DcgmHealthWatch.cpp) and NVSentinel maps it to COMPONENT_RESET (dcgmerrorsmapping.csv).
 * ECC disabled, or a GPU without ECC (NOT_SUPPORTED), has nothing to count: no finding and no error.
 * The volatile counter is the one a GPU reset clears, so the condition follows the repair.
 */
export const eccCheck: GpuCheck<unknown, null> = {
  name: 'ecc',
  scope: 'gpu',
  reasons: { fatal: [DOUBLE_BIT_ERROR] },
  initialState: () => null,
  run(ctx, gpu) {
    if (!gpu) return { findings: [] };
    const enabled = ctx.nvml.eccEnabled(gpu.handle);
    if (enabled instanceof NvmlError) return unanswered(enabled);
    if (!enabled) return { findings: [] };
    const uncorrected = ctx.nvml.totalEccErrors(gpu.handle, 1, 0);
    if (uncorrected instanceof NvmlError) return unanswered(uncorrected);
    const corrected = ctx.nvml.totalEccErrors(gpu.handle, 0, 0);
    const gauges = {
      ecc_volatile_uncorrected: uncorrected,
      ...(corrected instanceof NvmlError ? {} : { ecc_volatile_corrected: corrected }),
    };
    return { findings: uncorrected > 0 ? [finding(gpu, uncorrected)] : [], gauges };
  },
};

function finding(gpu: Gpu, n: number) {
  return {
    check: 'ecc',
    severity: 'fatal' as const,
    reason: DOUBLE_BIT_ERROR,
    message: `${describeGpu(gpu)}: ${n} uncorrectable (double-bit) ECC ${n === 1 ? 'error' : 'errors'} since the driver loaded; reset the GPU`,
    gpu,
  };
}

/** NOT_SUPPORTED: the GPU has no such counter, which is no error. */
export function unanswered(err: NvmlError): CheckResult {
  return err.code === NVML.NOT_SUPPORTED ? { findings: [] } : { findings: [], error: err };
}
