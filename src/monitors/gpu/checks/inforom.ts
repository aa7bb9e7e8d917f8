import { NVML, NvmlError } from '../../../host/nvml/api.ts';
import type { GpuCheck } from '../check.ts';
import { describeGpu } from '../identity.ts';

/**
 * The InfoROM (the board's small non-volatile store of ECC counts, retired pages and configuration):
 * nvmlDeviceValidateInforom answers SUCCESS when its checksum holds and NVML_ERROR_CORRUPTED_INFOROM (14)
 * when it does not (NVIDIA/go-nvml gen/nvml/nvml.h). DCGM's INFOROM watch reports an invalid InfoROM as a
 * warning, not a failure (NVIDIA/DCGM modules/health/DcgmHealthWatch.cpp MonitorInforom,
 * DCGM_FR_CORRUPT_INFOROM with DCGM_HEALTH_RESULT_WARN): the GPU keeps working, but what it records about
 * its own errors can no longer be trusted. The EKS agent has no reason for it, so the reason is ours.
 * NOT_SUPPORTED (a GPU without the call) is no finding and no error. No options.
 */
export const INFOROM_CORRUPTED = 'NvidiaInfoROMCorrupted';

export const inforomCheck: GpuCheck<unknown, null> = {
  name: 'inforom',
  scope: 'gpu',
  reasons: { warning: [INFOROM_CORRUPTED] },
  initialState: () => null,
  run(ctx, gpu) {
    if (gpu === undefined) return { findings: [] };
    const answer = ctx.nvml.validateInforom(gpu.handle);
    if (!(answer instanceof NvmlError)) return { findings: [], gauges: { inforom_valid: 1 } };
    if (answer.code === NVML.NOT_SUPPORTED) return { findings: [] };
    if (answer.code !== NVML.CORRUPTED_INFOROM) return { findings: [], error: answer };
    const message =
      `${describeGpu(gpu)}: the InfoROM is corrupted ` +
      `(nvmlDeviceValidateInforom answered ${answer.code}); the GPU's stored error records are not reliable`;
    return {
      findings: [{ check: 'inforom', severity: 'warning', reason: INFOROM_CORRUPTED, message, gpu }],
      gauges: { inforom_valid: 0 },
    };
  },
};
