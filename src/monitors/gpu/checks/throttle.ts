import { z } from 'zod';
import { NVML, NvmlError } from '../../../host/nvml/api.ts';
import type { CheckResult, Gpu, GpuCheck, GpuFinding } from '../check.ts';
import { describeGpu } from '../identity.ts';

/**
 * Hardware clock slowdowns: the bits of nvmlDeviceGetCurrentClocksEventReasons that mean the hardware
 * itself cut the clocks (NVIDIA/go-nvml gen/nvml/nvml.h, nvmlClocksEventReason*):
 *   0x8  HwSlowdown: "reducing the core clocks by a factor of 2 or more ... an indicator of temperature
 *        being too high, External Power Brake Assertion ..., Power draw is too high and Fast Trigger
 *        protection is reducing the clocks"
 *   0x40 HwThermalSlowdown: "temperature being too high"
 *   0x80 HwPowerBrakeSlowdown: "External Power Brake Assertion being triggered (e.g. by the system power
 *        supply)"
 * Never judged: GpuIdle 0x1 (nothing runs), ApplicationsClocksSetting 0x2 and SwPowerCap 0x4 (what an
 * operator set), SyncBoost 0x10, SwThermalSlowdown 0x20 (software lowering the clocks above the max
 * operating temperature, before the hardware has to), DisplayClockSetting 0x100: each is the GPU's own
 * management working as configured (issue 40: "never idle, application clocks or the SW power cap"). The H200 of gpu.md section 0 reported
 * 0x1 (idle) at rest. DCGM's THERMAL/POWER watches and the EKS agent's thermal/power policies give
 * warnings, never a failure (DcgmHealthWatch.cpp MonitorThermal/MonitorPower: DCGM_HEALTH_RESULT_WARN;
 * aws/eks-node-monitoring-agent pkg/reasons: NvidiaThermalError and NvidiaPowerError are Warning), so each
 * set bit is a warning: one event when it appears, and a gauge per bit.
 */
export const HW_SLOWDOWN_BITS = [
  // HwSlowdown has no EKS reason (EKS reports the DCGM violation counters as thermal or power); nvml.h
  // names both causes, so the reason names the bit. It "may be also reported during PState or clock
  // change" (nvml.h): a warning, never a condition.
  {
    key: 'hwSlowdown',
    bit: 0x8,
    gauge: 'clocks_event_hw_slowdown',
    reason: 'NvidiaHWSlowdown',
    text: 'HW slowdown',
  },
  {
    key: 'hwThermalSlowdown',
    bit: 0x40,
    gauge: 'clocks_event_hw_thermal_slowdown',
    reason: 'NvidiaThermalError',
    text: 'HW thermal slowdown (the GPU is too hot)',
  },
  {
    key: 'hwPowerBrake',
    bit: 0x80,
    gauge: 'clocks_event_hw_power_brake',
    reason: 'NvidiaPowerError',
    text: 'HW power brake slowdown (an external power brake, e.g. from the power supply)',
  },
] as const;

/** Which of the three bits give a warning; each on by default (issue 40: "HW slowdown, HW thermal
 * slowdown and HW power brake as warnings"). The gauges are published either way. */
export const throttleOptions = z.strictObject({
  hwSlowdown: z.boolean().default(true),
  hwThermalSlowdown: z.boolean().default(true),
  hwPowerBrake: z.boolean().default(true),
});

export type ThrottleOptions = z.infer<typeof throttleOptions>;

export const THROTTLE_DEFAULTS: ThrottleOptions = throttleOptions.parse({});

export const throttleCheck: GpuCheck<ThrottleOptions, null> = {
  name: 'throttle',
  scope: 'gpu',
  options: throttleOptions,
  reasons: { warning: HW_SLOWDOWN_BITS.map((b) => b.reason) },
  initialState: () => null,
  run(ctx, gpu) {
    if (gpu === undefined) return { findings: [] };
    const reasons = ctx.nvml.clocksEventReasons(gpu.handle);
    if (reasons instanceof NvmlError) return unanswered(reasons);
    return judge(gpu, reasons, ctx.options);
  },
};

function judge(gpu: Gpu, reasons: number, options: ThrottleOptions): CheckResult {
  const findings: GpuFinding[] = [];
  const gauges: Record<string, number> = {};
  for (const b of HW_SLOWDOWN_BITS) {
    // The mask is a 64-bit value read as a number: every bit judged here sits in the low 32.
    const set = (reasons & b.bit) !== 0;
    gauges[b.gauge] = set ? 1 : 0;
    if (!set || !options[b.key]) continue;
    findings.push({
      check: 'throttle',
      severity: 'warning',
      reason: b.reason,
      message: `${describeGpu(gpu)}: ${b.text} is engaged (clocks event reasons ${hex(reasons)})`,
      gpu,
    });
  }
  return { findings, gauges };
}

/**
 * NOT_SUPPORTED: this GPU reports no clock event reasons, so there is nothing to judge and no error.
 * FUNCTION_NOT_FOUND: a driver older than the call (it took over from nvmlDeviceGetCurrentClocksThrottleReasons):
 * no verdict for as long as that driver runs, which is no GPU fault either; the gauge says the check is
 * skipped, so it is not skipped silently.
 */
function unanswered(err: NvmlError): CheckResult {
  if (err.code === NVML.NOT_SUPPORTED) return { findings: [] };
  if (err.code === NVML.FUNCTION_NOT_FOUND)
    return { findings: [], gauges: { clocks_event_reasons_query_missing: 1 } };
  return { findings: [], error: err };
}

function hex(n: number): string {
  return `0x${n.toString(16)}`;
}
