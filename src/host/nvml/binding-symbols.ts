import type { Libc } from '../clib/libc.ts';
import { NVML, NvmlError } from './api.ts';

/**
 * NVML's C declarations as koffi reads them (nvml.h, NVML API 13; ../shared/reference/gpu.md 2.1):
 * nvmlReturn_t and the enums are int, handles `void *` (koffi's BigInt addresses), out-parameters and
 * structs Buffers the binding decodes itself. The header #defines the plain names to versioned symbols;
 * over FFI the versioned names are bound.
 */
const SIGNATURES = {
  nvmlInit_v2: 'int nvmlInit_v2()',
  nvmlShutdown: 'int nvmlShutdown()',
  nvmlErrorString: 'const char *nvmlErrorString(int result)',
  nvmlSystemGetDriverVersion: 'int nvmlSystemGetDriverVersion(_Out_ uint8_t *version, uint32_t length)',
  nvmlDeviceGetCount_v2: 'int nvmlDeviceGetCount_v2(_Out_ uint32_t *deviceCount)',
  nvmlDeviceGetHandleByIndex_v2: 'int nvmlDeviceGetHandleByIndex_v2(uint32_t index, _Out_ void **device)',
  nvmlDeviceGetUUID: 'int nvmlDeviceGetUUID(void *device, _Out_ uint8_t *uuid, uint32_t length)',
  nvmlDeviceGetName: 'int nvmlDeviceGetName(void *device, _Out_ uint8_t *name, uint32_t length)',
  nvmlDeviceGetPciInfo_v3: 'int nvmlDeviceGetPciInfo_v3(void *device, _Out_ uint8_t *pci)',
  nvmlDeviceGetEccMode: 'int nvmlDeviceGetEccMode(void *device, _Out_ int *current, _Out_ int *pending)',
  nvmlDeviceGetTotalEccErrors:
    'int nvmlDeviceGetTotalEccErrors(void *device, int errorType, int counterType, _Out_ uint64_t *eccCounts)',
  nvmlDeviceGetRemappedRows:
    'int nvmlDeviceGetRemappedRows(void *device, _Out_ uint32_t *corrRows, _Out_ uint32_t *uncRows, ' +
    '_Out_ uint32_t *isPending, _Out_ uint32_t *failureOccurred)',
  nvmlDeviceGetRetiredPages:
    'int nvmlDeviceGetRetiredPages(void *device, int cause, _Inout_ uint32_t *pageCount, _Out_ uint64_t *addresses)',
  nvmlDeviceGetRetiredPagesPendingStatus:
    'int nvmlDeviceGetRetiredPagesPendingStatus(void *device, _Out_ int *isPending)',
  nvmlDeviceGetCurrentClocksEventReasons:
    'int nvmlDeviceGetCurrentClocksEventReasons(void *device, _Out_ uint64_t *clocksEventReasons)',
  nvmlDeviceGetCurrPcieLinkWidth: 'int nvmlDeviceGetCurrPcieLinkWidth(void *device, _Out_ uint32_t *width)',
  nvmlDeviceGetMaxPcieLinkWidth: 'int nvmlDeviceGetMaxPcieLinkWidth(void *device, _Out_ uint32_t *width)',
  nvmlDeviceGetCurrPcieLinkGeneration:
    'int nvmlDeviceGetCurrPcieLinkGeneration(void *device, _Out_ uint32_t *gen)',
  nvmlDeviceGetMaxPcieLinkGeneration:
    'int nvmlDeviceGetMaxPcieLinkGeneration(void *device, _Out_ uint32_t *gen)',
  nvmlDeviceGetPcieReplayCounter: 'int nvmlDeviceGetPcieReplayCounter(void *device, _Out_ uint32_t *value)',
  nvmlDeviceGetNvLinkState: 'int nvmlDeviceGetNvLinkState(void *device, uint32_t link, _Out_ int *isActive)',
  nvmlDeviceGetGpuFabricInfoV:
    'int nvmlDeviceGetGpuFabricInfoV(void *device, _Inout_ uint8_t *gpuFabricInfo)',
  nvmlDeviceValidateInforom: 'int nvmlDeviceValidateInforom(void *device)',
  nvmlDeviceGetFieldValues:
    'int nvmlDeviceGetFieldValues(void *device, int valuesCount, _Inout_ uint8_t *values)',
  nvmlDeviceGetSupportedEventTypes:
    'int nvmlDeviceGetSupportedEventTypes(void *device, _Out_ uint64_t *eventTypes)',
  nvmlEventSetCreate: 'int nvmlEventSetCreate(_Out_ void **set)',
  nvmlDeviceRegisterEvents: 'int nvmlDeviceRegisterEvents(void *device, uint64_t eventTypes, void *set)',
  nvmlEventSetWait_v2: 'int nvmlEventSetWait_v2(void *set, _Out_ uint8_t *data, uint32_t timeoutms)',
  nvmlEventSetFree: 'int nvmlEventSetFree(void *set)',
} as const;

export type NvmlSymbol = keyof typeof SIGNATURES;

/** A declared C function; async runs it on a libuv pool thread and calls back with its return. */
export type CFunction = ((...args: unknown[]) => unknown) & {
  async(...args: [...unknown[], (err: unknown, result: number) => void]): void;
};

/**
 * The library's functions, each declared on its first call, so a symbol an older driver lacks answers
 * FUNCTION_NOT_FOUND for that call alone instead of failing the whole load.
 */
export class NvmlSymbols {
  private readonly lib: Libc;
  private readonly fns = new Map<NvmlSymbol, CFunction | null>();

  constructor(lib: Libc) {
    this.lib = lib;
  }

  /** The function, or null when the library does not export it (looked up once). */
  fn(name: NvmlSymbol): CFunction | null {
    let f = this.fns.get(name);
    if (f === undefined) {
      try {
        f = this.lib.func(SIGNATURES[name]) as CFunction;
      } catch {
        f = null;
      }
      this.fns.set(name, f);
    }
    return f;
  }

  /** Calls the function: its nvmlReturn_t, or FUNCTION_NOT_FOUND without a call when it is missing. */
  call(name: NvmlSymbol, ...args: unknown[]): number {
    const f = this.fn(name);
    return f ? (f(...args) as number) : NVML.FUNCTION_NOT_FOUND;
  }

  /** undefined on SUCCESS, else the NvmlError naming the call. */
  check(name: NvmlSymbol, ...args: unknown[]): NvmlError | undefined {
    const code = this.call(name, ...args);
    return code === NVML.SUCCESS ? undefined : this.error(name, code);
  }

  /** The error of a call with nvmlErrorString's text (a number alone when that symbol is missing too). */
  error(name: NvmlSymbol, code: number): NvmlError {
    const text = this.fn('nvmlErrorString')?.(code);
    return new NvmlError(name, code, typeof text === 'string' ? text : `NVML error ${code}`);
  }
}
