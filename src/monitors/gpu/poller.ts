import { NVML, type Nvml, type NvmlError } from '../../host/nvml/api.ts';
import type { HostPaths } from '../../host/paths.ts';
import type { CheckResult, Gpu, GpuCheck, GpuFinding } from './check.ts';
import { describeGpu, kernelBusId } from './identity.ts';
import { notEnumerated } from './pci-bus.ts';

/** A check the config enabled, with its validated options. */
export interface ActiveCheck {
  readonly check: GpuCheck;
  readonly options: unknown;
}

/** One check's answer for one GPU (or for the node: gpu undefined). */
export interface Slot {
  readonly check: string;
  readonly gpu: Gpu | undefined;
  readonly result: CheckResult;
}

/** One poll over every enabled check and GPU. */
export interface Poll {
  /** In check order, then GPU index: the order GPUUnhealthy's reason is chosen in. */
  readonly slots: readonly Slot[];
  /** GPUs that answered GPU_IS_LOST to some call: fallen off the bus. */
  readonly lost: readonly Gpu[];
  /** Node-wide calls (the count) that answered GPU_IS_LOST: a GPU fell off the bus, which one unknown. */
  readonly nodeLost: readonly NvmlError[];
  /** Calls that failed otherwise (not NOT_SUPPORTED): no verdict for that check. */
  readonly errors: readonly { readonly check: string; readonly gpu?: Gpu; readonly error: NvmlError }[];
  /** Checks that failed on their own (CheckResult.fault): no verdict for that check, NVML not to blame. */
  readonly faults: readonly { readonly check: string; readonly gpu?: Gpu; readonly fault: string }[];
}

/** Memory each check keeps between polls, per GPU (by index) or for the node. */
export class CheckStates {
  private readonly states = new Map<string, unknown>();

  get(check: GpuCheck, gpu: Gpu | undefined): unknown {
    const key = `${check.name}\u0000${gpu?.index ?? 'node'}`;
    if (!this.states.has(key)) this.states.set(key, check.initialState());
    return this.states.get(key);
  }

  clear(): void {
    this.states.clear();
  }
}

export interface PollInput {
  readonly nvml: Nvml;
  readonly checks: readonly ActiveCheck[];
  readonly gpus: readonly Gpu[];
  readonly now: number;
  readonly paths?: HostPaths | undefined;
  readonly states: CheckStates;
  readonly nodeGpuCapacity?: number | undefined;
}

/** Runs every enabled check on every GPU (node-scope checks once). Never throws. */
export function runChecks(input: PollInput): Poll {
  const slots: Slot[] = [];
  const lost = new Map<number, Gpu>();
  const nodeLost: NvmlError[] = [];
  const errors: { check: string; gpu?: Gpu; error: NvmlError }[] = [];
  const faults: { check: string; gpu?: Gpu; fault: string }[] = [];
  for (const { check, options } of input.checks) {
    const targets = check.scope === 'node' ? [undefined] : input.gpus;
    for (const gpu of targets) {
      const ctx = {
        nvml: input.nvml,
        options,
        now: input.now,
        ...(input.paths ? { paths: input.paths } : {}),
        nodeGpuCapacity: input.nodeGpuCapacity,
        gpus: input.gpus,
      };
      const result = runOne(check, ctx, gpu, input.states);
      const error = result.error;
      if (result.fault !== undefined) faults.push({ check: check.name, gpu, fault: result.fault });
      if (error && error.code === NVML.GPU_IS_LOST && gpu) lost.set(gpu.index, gpu);
      else if (error && error.code === NVML.GPU_IS_LOST) nodeLost.push(error);
      else if (error && error.code !== NVML.NOT_SUPPORTED) errors.push({ check: check.name, gpu, error });
      slots.push({ check: check.name, gpu, result });
    }
  }
  return { slots, lost: [...lost.values()], nodeLost, errors, faults };
}

function runOne(
  check: GpuCheck,
  ctx: Parameters<GpuCheck['run']>[0],
  gpu: Gpu | undefined,
  states: CheckStates,
): CheckResult {
  try {
    return check.run(ctx, gpu, states.get(check, gpu));
  } catch (err) {
    // A check's own bug must not end the poll, nor pass for NVML failing (no nvmlReturn_t, so no re-init):
    // only this check has no verdict.
    const text = err instanceof Error ? err.message : String(err);
    return { findings: [], fault: `threw: ${text}` };
  }
}

/** The fallen-off-bus finding of a GPU that answered GPU_IS_LOST (or that NVML's events said is gone). */
export function lostFinding(gpu: Gpu, how: string, reason: string): GpuFinding {
  return {
    check: 'nvml',
    severity: 'fatal',
    reason,
    message: `${describeGpu(gpu)} has fallen off the bus: ${how}`,
    gpu,
  };
}

/**
 * The fallen-off-bus finding when a node-wide call (nvmlDeviceGetCount_v2, or nvmlInit_v2 at start)
 * answers GPU_IS_LOST: NVML gives no index then, so it names the NVIDIA GPUs on the PCI bus (`onBus`)
 * that none of `enumerated` is, and with no GPU enumerated yet only what the bus shows.
 */
export function countLostFinding(
  error: NvmlError,
  onBus: readonly string[] | undefined,
  enumerated: readonly Gpu[],
  reason: string,
): GpuFinding {
  let how = `${error.call} answered GPU_IS_LOST`;
  const known = enumerated.filter((g) => g.busId !== 'unknown');
  if (onBus && onBus.length > 0 && known.length === 0) {
    how += ` before NVML enumerated any GPU (on the PCI bus: ${onBus.map(kernelBusId).join(', ')})`;
  } else if (onBus) {
    const missing = notEnumerated(onBus, known);
    if (missing.length > 0) how += `; on the PCI bus and not enumerated by NVML: ${missing.join(', ')}`;
  }
  return { check: 'nvml', severity: 'fatal', reason, message: `a GPU has fallen off the bus: ${how}` };
}
