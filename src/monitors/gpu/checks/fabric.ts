import { z } from 'zod';
import { type FabricInfo, NVML, NvmlError } from '../../../host/nvml/api.ts';
import type { Gpu, GpuCheck, GpuFinding } from '../check.ts';
import { describeGpu } from '../identity.ts';

/**
 * The GPU's registration with the NVLink fabric on NVSwitch systems, from nvmlDeviceGetGpuFabricInfoV
 * (nvmlGpuFabricInfo_v3_t; constants in NVIDIA/go-nvml gen/nvml/nvml.h, summarised in gpu.md 2.3).
 * A GPU outside any fabric answers state NOT_SUPPORTED (0) or NOT_SUPPORTED: no fabric, no finding. A
 * driver without the call (the binding's FUNCTION_NOT_FOUND) or without the v3 struct
 * (NVML_ERROR_ARGUMENT_VERSION_MISMATCH, 25, nvml.h) cannot say: no verdict for as long as that driver
 * runs, which is no GPU fault, so no error either; the gauge fabric_query_missing says it is skipped.
 * The Fabric Manager walks each GPU through NOT_STARTED, IN_PROGRESS and COMPLETED (NVIDIA/NVSentinel
 * issue #883, where FM was down for 20 days unnoticed); `status` means something only once COMPLETED
 * (nvml.h: "Must be checked only if state returns complete"). Fatal findings take the EKS agent's
 * NvidiaFabricError (aws/eks-node-monitoring-agent pkg/reasons, fatal; it decodes the same health mask);
 * each warning has its own reason (ours).
 */

/**
 * The EKS agent's name for the fatal findings. Each warning has its own (ours): a warning's event is sent
 * once per check, GPU and reason, so a second kind of degradation while the first holds is still told.
 */
export const FABRIC_ERROR = 'NvidiaFabricError';
export const FABRIC_LIMITED_CAPACITY = 'NvidiaFabricLimitedCapacity';
export const FABRIC_MISCONFIGURED = 'NvidiaFabricMisconfigured';

/** nvmlGpuFabricState_t. */
const STATE = { NOT_SUPPORTED: 0, NOT_STARTED: 1, IN_PROGRESS: 2, COMPLETED: 3 } as const;
/** NVML_ERROR_ARGUMENT_VERSION_MISMATCH: "The provided version is invalid/unsupported" (nvml.h). */
const ARGUMENT_VERSION_MISMATCH = 25;
const STATE_NAMES = ['not supported', 'not started', 'in progress', 'completed'];

/** nvmlGpuFabricInfo_v3_t.healthSummary. */
const SUMMARY = { UNHEALTHY: 2, LIMITED_CAPACITY: 3 } as const;

/**
 * healthMask sub-fields, read as (mask >> shift) & width (NVML_GPU_FABRIC_HEALTH_GET). For the
 * two-bit fields 0 is "not supported", 1 TRUE and 2 FALSE, so a non-zero mask is no fault by itself:
 * 0x80 is ACCESS_TIMEOUT_RECOVERY = FALSE (the EKS agent learned this from a false alarm, gpu.md 2.3).
 * DCGM reports DEGRADED_BW and ROUTE_UNHEALTHY TRUE as NVLINK-watch incidents ("Bandwidth Degraded",
 * "Route Unhealthy": NVIDIA/DCGM testing/python3 test_dcgm_health_check_fabric_health_mask). The two
 * "recovery in progress" fields are NVML reporting a repair under way: named in messages, no finding.
 */
export const HEALTH_FIELDS = [
  { name: 'bandwidth degraded', shift: 0, width: 0x3, reason: 'NvidiaFabricBandwidthDegraded' },
  { name: 'route recovery in progress', shift: 2, width: 0x3, reason: undefined },
  { name: 'route unhealthy', shift: 4, width: 0x3, reason: 'NvidiaFabricRouteUnhealthy' },
  { name: 'access timeout recovery in progress', shift: 6, width: 0x3, reason: undefined },
] as const;

/** INCORRECT_CONFIGURATION: 0 not supported, 1 none, 2 and above a named misconfiguration. */
const INCORRECT_CONFIGURATION = { shift: 8, width: 0xf } as const;

export const fabricOptions = z.strictObject({
  /**
   * How long a GPU may stay NOT_STARTED or IN_PROGRESS before it is a fatal finding: until registration
   * completes CUDA refuses work on an NVSwitch system (cudaErrorSystemNotReady, 802: "verify ... all
   * required driver daemons are actively running"). Five minutes is the EKS agent's check period
   * (gpu.md section 3, E3), ample for the Fabric Manager's start at boot.
   */
  notCompletedGraceMs: z.number().int().min(0).default(300_000),
});

export type FabricOptions = z.infer<typeof fabricOptions>;

export const FABRIC_DEFAULTS: FabricOptions = fabricOptions.parse({});

export interface FabricState {
  /** When this GPU was first seen registered but not completed; undefined once completed. */
  notCompletedSince?: number;
}

export const fabricCheck: GpuCheck<FabricOptions, FabricState> = {
  name: 'fabric',
  scope: 'gpu',
  options: fabricOptions,
  reasons: {
    fatal: [FABRIC_ERROR],
    warning: [
      FABRIC_LIMITED_CAPACITY,
      ...HEALTH_FIELDS.flatMap((f) => (f.reason ? [f.reason] : [])),
      FABRIC_MISCONFIGURED,
    ],
  },
  initialState: () => ({}),
  run(ctx, gpu, state) {
    if (gpu === undefined) return { findings: [] };
    const info = ctx.nvml.fabricInfo(gpu.handle);
    if (info instanceof NvmlError) {
      if (info.code === NVML.NOT_SUPPORTED) return { findings: [] };
      const missing = info.code === NVML.FUNCTION_NOT_FOUND || info.code === ARGUMENT_VERSION_MISMATCH;
      return missing ? { findings: [], gauges: { fabric_query_missing: 1 } } : { findings: [], error: info };
    }
    if (info.state === STATE.NOT_SUPPORTED) return { findings: [] };
    const gauges = { fabric_state: info.state, fabric_health_summary: info.healthSummary };
    if (info.state !== STATE.COMPLETED) {
      return { findings: registration(gpu, info, state, ctx.options, ctx.now), gauges };
    }
    delete state.notCompletedSince;
    return { findings: completed(gpu, info), gauges };
  },
};

function registration(
  gpu: Gpu,
  info: FabricInfo,
  state: FabricState,
  o: FabricOptions,
  now: number,
): GpuFinding[] {
  state.notCompletedSince ??= now;
  const waited = now - state.notCompletedSince;
  if (waited < o.notCompletedGraceMs) return [];
  const message =
    `${describeGpu(gpu)}: NVLink fabric registration ${stateName(info.state)} for ${Math.round(waited / 1000)} s ` +
    '(is the NVIDIA Fabric Manager running?)';
  return [finding(gpu, 'fatal', FABRIC_ERROR, message)];
}

function completed(gpu: Gpu, info: FabricInfo): GpuFinding[] {
  const out: GpuFinding[] = [];
  const health = decodeHealthMask(info.healthMask);
  const detail = health.all.length > 0 ? ` (health: ${health.all.join(', ')})` : '';
  const name = describeGpu(gpu);
  if (info.status !== NVML.SUCCESS) {
    out.push(
      finding(
        gpu,
        'fatal',
        FABRIC_ERROR,
        `${name}: NVLink fabric registration failed, status ${info.status}`,
      ),
    );
  }
  if (info.healthSummary === SUMMARY.UNHEALTHY) {
    out.push(finding(gpu, 'fatal', FABRIC_ERROR, `${name}: NVLink fabric health summary unhealthy${detail}`));
  } else if (info.healthSummary === SUMMARY.LIMITED_CAPACITY) {
    out.push(
      finding(gpu, 'warning', FABRIC_LIMITED_CAPACITY, `${name}: NVLink fabric at limited capacity${detail}`),
    );
  }
  for (const fault of health.faults) {
    const message = `${name}: NVLink fabric ${fault.name} (health mask ${hex(info.healthMask)})`;
    out.push(finding(gpu, 'warning', fault.reason, message));
  }
  return out;
}

interface Fault {
  readonly name: string;
  readonly reason: string;
}

/** The TRUE sub-fields of a health mask: `faults` give findings, `all` also names recoveries under way. */
export function decodeHealthMask(mask: number): { faults: Fault[]; all: string[] } {
  const faults: Fault[] = [];
  const all: string[] = [];
  for (const f of HEALTH_FIELDS) {
    if (((mask >>> f.shift) & f.width) !== 1) continue;
    all.push(f.name);
    if (f.reason) faults.push({ name: f.name, reason: f.reason });
  }
  const config = (mask >>> INCORRECT_CONFIGURATION.shift) & INCORRECT_CONFIGURATION.width;
  if (config >= 2) {
    const name = `incorrect configuration (code ${config})`;
    faults.push({ name, reason: FABRIC_MISCONFIGURED });
    all.push(name);
  }
  return { faults, all };
}

function finding(gpu: Gpu, severity: GpuFinding['severity'], reason: string, message: string): GpuFinding {
  return { check: 'fabric', severity, reason, message, gpu };
}

function stateName(state: number): string {
  return STATE_NAMES[state] ?? `state ${state}`;
}

function hex(n: number): string {
  return `0x${n.toString(16)}`;
}
