import { type KoffiLoad, type Libc, libraryLoader } from '../clib/libc.ts';
import type {
  Answer,
  DeviceHandle,
  EventSet,
  FabricInfo,
  FieldValue,
  Nvml,
  NvmlEvent,
  NvmlLoader,
  PciInfo,
  RemappedRows,
} from './api.ts';
import { DeviceCalls } from './binding-device.ts';
import { EventCalls } from './binding-events.ts';
import { HandleTable } from './binding-handles.ts';
import { cString, DRIVER_VERSION_BUFFER } from './binding-structs.ts';
import { NvmlSymbols } from './binding-symbols.ts';

type Range = { current: number; max: number };

/** The Nvml interface (api.ts) over a loaded libnvidia-ml.so.1; the calls live in binding-*.ts. */
class KoffiNvml implements Nvml {
  private readonly sym: NvmlSymbols;
  private readonly handles = new HandleTable();
  private readonly device: DeviceCalls;
  private readonly events: EventCalls;

  constructor(lib: Libc) {
    this.sym = new NvmlSymbols(lib);
    this.device = new DeviceCalls(this.sym, this.handles);
    this.events = new EventCalls(this.sym, this.handles);
  }

  init(): Answer<void> {
    return this.sym.check('nvmlInit_v2');
  }

  /** Every handle and event set is void afterwards. */
  shutdown(): Answer<void> {
    const err = this.sym.check('nvmlShutdown');
    if (!err) this.handles.clear();
    return err;
  }

  driverVersion(): Answer<string> {
    const buf = Buffer.alloc(DRIVER_VERSION_BUFFER);
    return this.sym.check('nvmlSystemGetDriverVersion', buf, DRIVER_VERSION_BUFFER) ?? cString(buf);
  }

  deviceCount(): Answer<number> {
    const buf = Buffer.alloc(4);
    return this.sym.check('nvmlDeviceGetCount_v2', buf) ?? buf.readUInt32LE(0);
  }

  handle(index: number): Answer<DeviceHandle> {
    const out = Buffer.alloc(8);
    return (
      this.sym.check('nvmlDeviceGetHandleByIndex_v2', index, out) ??
      this.handles.device(index, out.readBigUInt64LE(0))
    );
  }

  uuid = (d: DeviceHandle): Answer<string> => this.device.uuid(d);
  name = (d: DeviceHandle): Answer<string> => this.device.name(d);
  pciInfo = (d: DeviceHandle): Answer<PciInfo> => this.device.pciInfo(d);
  eccEnabled = (d: DeviceHandle): Answer<boolean> => this.device.eccEnabled(d);
  totalEccErrors = (d: DeviceHandle, e: 0 | 1, c: 0 | 1): Answer<number> =>
    this.device.totalEccErrors(d, e, c);
  remappedRows = (d: DeviceHandle): Answer<RemappedRows> => this.device.remappedRows(d);
  retiredPages = (d: DeviceHandle, cause: 0 | 1): Answer<number> => this.device.retiredPages(d, cause);
  retiredPagesPending = (d: DeviceHandle): Answer<boolean> => this.device.retiredPagesPending(d);
  clocksEventReasons = (d: DeviceHandle): Answer<number> => this.device.clocksEventReasons(d);
  pcieWidth = (d: DeviceHandle): Answer<Range> => this.device.pcieWidth(d);
  pcieGeneration = (d: DeviceHandle): Answer<Range> => this.device.pcieGeneration(d);
  pcieReplayCounter = (d: DeviceHandle): Answer<number> => this.device.pcieReplayCounter(d);
  nvLinkActive = (d: DeviceHandle, link: number): Answer<boolean> => this.device.nvLinkActive(d, link);
  fabricInfo = (d: DeviceHandle): Answer<FabricInfo> => this.device.fabricInfo(d);
  validateInforom = (d: DeviceHandle): Answer<void> => this.device.validateInforom(d);
  fieldValues = (
    d: DeviceHandle,
    fields: readonly { fieldId: number; scopeId?: number }[],
  ): Answer<FieldValue[]> => this.device.fieldValues(d, fields);
  supportedEventTypes = (d: DeviceHandle): Answer<number> => this.device.supportedEventTypes(d);
  eventSetCreate = (): Answer<EventSet> => this.events.eventSetCreate();
  registerEvents = (d: DeviceHandle, types: number, set: EventSet): Answer<void> =>
    this.events.registerEvents(d, types, set);
  eventWait = (set: EventSet, timeoutMs: number): Promise<Answer<NvmlEvent>> =>
    this.events.eventWait(set, timeoutMs);
  eventSetFree = (set: EventSet): Answer<void> => this.events.eventSetFree(set);
}

/** The structs are read at LP64 little-endian offsets: the platforms NVIDIA ships NVML for on Linux. */
const ARCHES = new Set(['x64', 'arm64']);

/**
 * NVML loaded on first use from `library` (a soname on the loader path, or a path: GKE installs the
 * driver under /home/kubernetes/bin/nvidia, the GPU Operator under its driver root). Returns the bound
 * library, or an Error saying which file and why: no such file, no koffi, or a platform whose struct
 * layout this binding does not read. Until a load succeeds each call tries again, so a driver installed
 * after start-up is found; nothing is loaded at import time. nvmlInit_v2 is the caller's first call.
 */
export function nvmlLoader(
  library = 'libnvidia-ml.so.1',
  loadKoffi?: () => KoffiLoad,
  platform: { os: string; arch: string } = { os: process.platform, arch: process.arch },
): NvmlLoader {
  const load = libraryLoader(library, loadKoffi);
  let nvml: Nvml | undefined;
  return () => {
    if (nvml) return nvml;
    if (platform.os !== 'linux' || !ARCHES.has(platform.arch)) {
      return new Error(
        `NVML is bound on 64-bit Linux (x64, arm64) only, not ${platform.os}/${platform.arch}`,
      );
    }
    const lib = load();
    if (lib instanceof Error) return lib;
    nvml = new KoffiNvml(lib);
    return nvml;
  };
}
