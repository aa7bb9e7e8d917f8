/**
 * NVML as the GPU monitor sees it: the calls it makes, each answering a value or an NvmlError carrying
 * NVML's return code. The koffi binding (binding.ts) implements it over libnvidia-ml.so.1; tests script a
 * fake shared object built from C (test/support/fake-nvml/) through the same binding. Signatures, struct
 * layouts and constants: NVIDIA/go-nvml gen/nvml/nvml.h (NVML API 13), as summarised in
 * ../shared/reference/gpu.md section 2.
 */

/** nvmlReturn_t values the monitor tells apart (nvml.h). */
export const NVML = {
  SUCCESS: 0,
  UNINITIALIZED: 1,
  INVALID_ARGUMENT: 2,
  NOT_SUPPORTED: 3,
  NO_PERMISSION: 4,
  NOT_FOUND: 6,
  INSUFFICIENT_SIZE: 7,
  DRIVER_NOT_LOADED: 9,
  TIMEOUT: 10,
  LIBRARY_NOT_FOUND: 12,
  FUNCTION_NOT_FOUND: 13,
  CORRUPTED_INFOROM: 14,
  GPU_IS_LOST: 15,
  RESET_REQUIRED: 16,
  LIB_RM_VERSION_MISMATCH: 18,
  NO_DATA: 21,
  GPU_NOT_FOUND: 28,
  UNKNOWN: 999,
} as const;

/** A call that did not answer SUCCESS: which call, NVML's code and its nvmlErrorString text. */
export class NvmlError extends Error {
  readonly call: string;
  readonly code: number;

  constructor(call: string, code: number, text: string) {
    super(`${call}: ${text} (${code})`);
    this.name = 'NvmlError';
    this.call = call;
    this.code = code;
  }
}

export type Answer<T> = T | NvmlError;

/** An opaque nvmlDevice_t, valid until shutdown. */
export interface DeviceHandle {
  readonly index: number;
}

/** An opaque nvmlEventSet_t. */
export interface EventSet {
  readonly id: number;
}

export interface PciInfo {
  /** "dddddddd:bb:dd.f", as nvmlPciInfo_t.busId. */
  readonly busId: string;
  /** device << 16 | vendor. */
  readonly pciDeviceId: number;
}

export interface RemappedRows {
  readonly correctable: number;
  readonly uncorrectable: number;
  /** A GPU reset is needed to apply a remap. */
  readonly pending: boolean;
  /** A remap failed: the GPU needs replacing. */
  readonly failure: boolean;
}

export interface FabricInfo {
  /** 0 not supported, 1 not started, 2 in progress, 3 completed. */
  readonly state: number;
  /** An nvmlReturn_t; meaningful only when state is completed. */
  readonly status: number;
  readonly healthMask: number;
  readonly healthSummary: number;
}

export interface FieldValue {
  readonly fieldId: number;
  readonly scopeId: number;
  /** The field's own nvmlReturn_t. */
  readonly ret: number;
  /** The value read as its nvmlValueType_t says (numbers above 2^53 lose precision). */
  readonly value: number;
}

export interface NvmlEvent {
  /** The device's index, when the event's handle is one this binding handed out. */
  readonly index: number | undefined;
  readonly eventType: number;
  /** The Xid for XidCriticalError (999 = unknown Xid); 0 for most other types. */
  readonly eventData: number;
  readonly gpuInstanceId: number;
  readonly computeInstanceId: number;
}

/** Event type bits (nvmlEventType*). */
export const EVENT = {
  SINGLE_BIT_ECC: 0x1,
  DOUBLE_BIT_ECC: 0x2,
  XID_CRITICAL: 0x8,
  SBE_STORM: 0x200,
  DRAM_RETIREMENT: 0x400,
  DRAM_RETIREMENT_FAILURE: 0x800,
  GPU_UNAVAILABLE: 0x4000,
  GPU_RECOVERY_ACTION: 0x8000,
} as const;

/** The NVML calls the monitor uses; each synchronous except the event wait, which blocks off the loop. */
export interface Nvml {
  init(): Answer<void>;
  shutdown(): Answer<void>;
  driverVersion(): Answer<string>;
  deviceCount(): Answer<number>;
  handle(index: number): Answer<DeviceHandle>;
  uuid(d: DeviceHandle): Answer<string>;
  name(d: DeviceHandle): Answer<string>;
  pciInfo(d: DeviceHandle): Answer<PciInfo>;
  /** nvmlDeviceGetEccMode's current mode. */
  eccEnabled(d: DeviceHandle): Answer<boolean>;
  /** nvmlDeviceGetTotalEccErrors: errorType 0 corrected / 1 uncorrected; counter 0 volatile / 1 aggregate. */
  totalEccErrors(d: DeviceHandle, errorType: 0 | 1, counterType: 0 | 1): Answer<number>;
  remappedRows(d: DeviceHandle): Answer<RemappedRows>;
  /** nvmlDeviceGetRetiredPages with a zero-length buffer: the count. cause 0 multiple SBE, 1 DBE. */
  retiredPages(d: DeviceHandle, cause: 0 | 1): Answer<number>;
  retiredPagesPending(d: DeviceHandle): Answer<boolean>;
  clocksEventReasons(d: DeviceHandle): Answer<number>;
  pcieWidth(d: DeviceHandle): Answer<{ readonly current: number; readonly max: number }>;
  pcieGeneration(d: DeviceHandle): Answer<{ readonly current: number; readonly max: number }>;
  pcieReplayCounter(d: DeviceHandle): Answer<number>;
  nvLinkActive(d: DeviceHandle, link: number): Answer<boolean>;
  fabricInfo(d: DeviceHandle): Answer<FabricInfo>;
  /** nvmlDeviceValidateInforom: void when valid, CORRUPTED_INFOROM when not. */
  validateInforom(d: DeviceHandle): Answer<void>;
  fieldValues(
    d: DeviceHandle,
    fields: readonly { fieldId: number; scopeId?: number }[],
  ): Answer<FieldValue[]>;
  supportedEventTypes(d: DeviceHandle): Answer<number>;
  eventSetCreate(): Answer<EventSet>;
  registerEvents(d: DeviceHandle, types: number, set: EventSet): Answer<void>;
  /** nvmlEventSetWait_v2 on a pool thread: resolves with the event, TIMEOUT, GPU_IS_LOST, … */
  eventWait(set: EventSet, timeoutMs: number): Promise<Answer<NvmlEvent>>;
  eventSetFree(set: EventSet): Answer<void>;
}

/** Loads NVML on first use: the library, or why there is none (no library, no koffi). */
export type NvmlLoader = () => Nvml | Error;
