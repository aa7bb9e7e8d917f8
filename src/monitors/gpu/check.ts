import type { z } from 'zod';
import type { DeviceHandle, Nvml, NvmlError } from '../../host/nvml/api.ts';
import type { HostPaths } from '../../host/paths.ts';

/**
 * One GPU as the monitor found it at start (or after NVML came back): NVML's index and handle and the
 * identity every finding names (issue 40: PCI bus id, and the UUID NVML always knows).
 */
export interface Gpu {
  readonly index: number;
  readonly handle: DeviceHandle;
  readonly uuid: string;
  /** NVML's "dddddddd:bb:dd.f". */
  readonly busId: string;
  readonly name: string;
}

/**
 * What a check found wrong. `fatal` holds the monitor's GPUUnhealthy condition True while the check keeps
 * finding it (a repair controller acts on it: NVIDIA's action is a GPU reset, a reboot or a replacement);
 * `warning` gives one Warning event when it first appears (throttling, a degraded link), and the gauge.
 */
export interface GpuFinding {
  readonly check: string;
  readonly severity: 'fatal' | 'warning';
  /** The EKS node monitoring agent's reason where it has one (NvidiaDoubleBitError, …). */
  readonly reason: string;
  /** Names the GPU (index, PCI bus id, UUID) and the value NVML gave. */
  readonly message: string;
  /** The GPU it concerns; absent for node-wide findings (the device count). */
  readonly gpu?: Gpu;
}

/** One check's answer for one GPU (or for the node, for node-wide checks). */
export interface CheckResult {
  readonly findings: readonly GpuFinding[];
  /** Gauges to publish, by name suffix (npd_gpu_<name>), for this GPU. */
  readonly gauges?: Readonly<Record<string, number>>;
  /**
   * NVML could not answer (not NOT_SUPPORTED, which means the GPU has no such feature and is no error):
   * the check has no verdict, so the condition goes Unknown rather than False on a guess.
   */
  readonly error?: NvmlError;
  /**
   * The check's own failure, not NVML's: it threw (a bug), or NVML's answer lacked what it asked for. No
   * nvmlReturn_t, so the NVML session stays; only this check has no verdict this poll (what it held stays).
   */
  readonly fault?: string;
}

/** What a check reads from; `state` is its own memory between polls (counters for rates, last bits). */
export interface CheckContext<O> {
  readonly nvml: Nvml;
  readonly options: O;
  readonly now: number;
  /** The host's /sys and /proc (--host-root), for checks that compare NVML with the PCI bus. */
  readonly paths?: HostPaths;
  /** The Node's `nvidia.com/gpu` capacity as last seen; undefined when not known (or not asked for). */
  readonly nodeGpuCapacity?: number | undefined;
  /** The GPUs NVML enumerated that still answer, so device-count can name the bus's others; absent: unknown. */
  readonly gpus?: readonly Gpu[];
}

/** A GPU health check: one per file under checks/, registered in checks/index.ts. */
export interface GpuCheck<O = unknown, S = unknown> {
  /** The config key (`checks.<name>`) and the `check` label of the metrics. */
  readonly name: string;
  /**
   * The options of `checks.<name>` besides `enabled`, each defaulted with its source cited; absent: the
   * check takes none. The config schema (schema.ts) validates them, naming the file and the field.
   */
  readonly options?: z.ZodType<O>;
  /**
   * The reasons its findings use, so the subsystem conditions classify them (fatal: GPUUnhealthy's
   * reasons; warning: the events'). A reason left out still reports, unclassified.
   */
  readonly reasons?: { readonly fatal?: readonly string[]; readonly warning?: readonly string[] };
  /** Per GPU, or once for the node (the device count). */
  readonly scope: 'gpu' | 'node';
  /** Fresh per-GPU (or per-node) memory. */
  initialState(): S;
  run(ctx: CheckContext<O>, gpu: Gpu | undefined, state: S): CheckResult;
}
