import { z } from 'zod';
import { NvmlError } from '../../../host/nvml/api.ts';
import type { Gpu, GpuCheck, GpuFinding } from '../check.ts';
import { describeGpu } from '../identity.ts';
import { unanswered } from './ecc.ts';

export const ROW_REMAP_PENDING = 'NvidiaRowRemapPending';
export const ROW_REMAP_FAILURE = 'NvidiaRowRemapFailure';
export const ROW_REMAP_LIMIT = 'NvidiaRowRemapLimit';

/**
 * `uncorrectableWarning`: 512 uncorrectable remaps, DCGM's limit for a warning (NVIDIA/DCGM
 * common/DcgmGPUHardwareLimits.h, used by DcgmHealthWatch.cpp's MEM watch).
 */
export const rowRemapOptions = z.strictObject({
  uncorrectableWarning: z.number().int().min(1).default(512),
});
export type RowRemapOptions = z.infer<typeof rowRemapOptions>;

/**
 * Row remapping (Ampere and newer; nvmlDeviceGetRemappedRows). `pending`: a remap waits for a GPU reset
 * to take effect, so the GPU runs on a known-bad row until then: fatal (NVSentinel PENDING_ROW_REMAP ->
 * COMPONENT_RESET). `failure`: a remap failed, the GPU needs replacing: fatal (DCGM MEM watch FAIL,
 * NVSentinel ROW_REMAP_FAILURE -> CONTACT_SUPPORT). Many uncorrectable remaps: a warning (DCGM).
 * NOT_SUPPORTED (older GPUs, or MIG with active instances, nvml.h) is no finding and no error.
 */
export const rowRemapCheck: GpuCheck<RowRemapOptions, null> = {
  name: 'row-remap',
  scope: 'gpu',
  options: rowRemapOptions,
  reasons: { fatal: [ROW_REMAP_PENDING, ROW_REMAP_FAILURE], warning: [ROW_REMAP_LIMIT] },
  initialState: () => null,
  run(ctx, gpu) {
    if (!gpu) return { findings: [] };
    const rows = ctx.nvml.remappedRows(gpu.handle);
    if (rows instanceof NvmlError) return unanswered(rows);
    const findings: GpuFinding[] = [];
    const counts = `${rows.uncorrectable} uncorrectable and ${rows.correctable} correctable remapped rows`;
    if (rows.pending)
      findings.push(
        fatal(gpu, ROW_REMAP_PENDING, `a row remap is pending (${counts}); reset the GPU to apply it`),
      );
    if (rows.failure)
      findings.push(fatal(gpu, ROW_REMAP_FAILURE, `a row remap failed (${counts}); replace the GPU`));
    if (rows.uncorrectable >= ctx.options.uncorrectableWarning) {
      const message = `${describeGpu(gpu)}: ${counts}, at or above ${ctx.options.uncorrectableWarning}`;
      findings.push({ check: 'row-remap', severity: 'warning', reason: ROW_REMAP_LIMIT, message, gpu });
    }
    const gauges = {
      remapped_rows_correctable: rows.correctable,
      remapped_rows_uncorrectable: rows.uncorrectable,
      remapped_rows_pending: rows.pending ? 1 : 0,
      remapped_rows_failure: rows.failure ? 1 : 0,
    };
    return { findings, gauges };
  },
};

function fatal(gpu: Gpu, reason: string, what: string): GpuFinding {
  return { check: 'row-remap', severity: 'fatal', reason, message: `${describeGpu(gpu)}: ${what}`, gpu };
}
