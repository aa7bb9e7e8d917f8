import type { Clock, TimerHandle } from '../../src/core/clock.ts';
import {
  type Answer,
  type DeviceHandle,
  type EventSet,
  type FabricInfo,
  type FieldValue,
  NVML,
  type Nvml,
  NvmlError,
  type NvmlEvent,
  type RemappedRows,
} from '../../src/host/nvml/api.ts';

/** One fake GPU; every field defaults to a healthy H200 as gpu.md section 0 measured it. */
export interface MemoryGpu {
  uuid: string;
  name: string;
  busId: string;
  eccEnabled: boolean;
  /** [corrected, uncorrected] volatile counts. */
  volatileEcc: [number, number];
  remapped: RemappedRows | 'not-supported';
  /** Retired pages by cause (multiple SBE, DBE) and the pending flag; Hopper: NOT_SUPPORTED. */
  retired: { sbe: number; dbe: number; pending: boolean } | 'not-supported';
  supportedEvents: number;
  clocksEventReasons: number;
}

export function h200(index: number, over: Partial<MemoryGpu> = {}): MemoryGpu {
  const hex = index.toString(16).padStart(2, '0').toUpperCase();
  return {
    uuid: `GPU-0000000${index}-5bff-8cfd-14bc-40686eeaa1f3`,
    name: 'NVIDIA H200',
    busId: `00000000:${hex}:00.0`,
    eccEnabled: true,
    volatileEcc: [0, 0],
    remapped: { correctable: 0, uncorrectable: 0, pending: false, failure: false },
    retired: 'not-supported',
    supportedEvents: 0xff9f,
    clocksEventReasons: 0x1,
    ...over,
  };
}

const TEXT: Readonly<Record<number, string>> = {
  [NVML.NOT_SUPPORTED]: 'Not Supported',
  [NVML.GPU_IS_LOST]: 'GPU is lost',
  [NVML.UNKNOWN]: 'Unknown Error',
  [NVML.DRIVER_NOT_LOADED]: 'Driver Not Loaded',
  [NVML.LIB_RM_VERSION_MISMATCH]: 'RM has detected an NVML/RM version mismatch',
  [NVML.TIMEOUT]: 'Timeout',
  [NVML.UNINITIALIZED]: 'Uninitialized',
};

export function nvmlErr(call: string, code: number): NvmlError {
  return new NvmlError(call, code, TEXT[code] ?? `error ${code}`);
}

/**
 * An in-memory Nvml for the monitor's unit tests: GPUs as plain objects a test edits between polls,
 * failures scripted per call (`fail.set('uuid', code)` or per GPU `fail.set('uuid:1', code)`), and an
 * event wait that answers a pushed event at once or TIMEOUT after its timeout on the injected clock.
 */
export class MemoryNvml implements Nvml {
  gpus: MemoryGpu[];
  readonly fail = new Map<string, number>();
  readonly calls: string[] = [];
  /** Waits started and not answered yet. */
  pendingWaits = 0;
  initialised = false;
  private readonly clock: Clock;
  private readonly queue: (NvmlEvent | NvmlError)[] = [];
  private waiter: ((a: Answer<NvmlEvent>) => void) | undefined;
  private sets = 0;

  constructor(clock: Clock, gpus: MemoryGpu[] = [h200(0)]) {
    this.clock = clock;
    this.gpus = gpus;
  }

  /** An event (or a wait error) for the next wait. */
  push(e: NvmlEvent | NvmlError): void {
    const w = this.waiter;
    if (w) {
      this.waiter = undefined;
      w(e);
    } else this.queue.push(e);
  }

  xid(index: number, code: number): void {
    this.push({
      index,
      eventType: 0x8,
      eventData: code,
      gpuInstanceId: 0xffffffff,
      computeInstanceId: 0xffffffff,
    });
  }

  private check(call: string, d?: DeviceHandle): NvmlError | undefined {
    this.calls.push(d ? `${call}:${d.index}` : call);
    const code = (d ? this.fail.get(`${call}:${d.index}`) : undefined) ?? this.fail.get(call);
    return code === undefined ? undefined : nvmlErr(call, code);
  }

  private gpu<T>(call: string, d: DeviceHandle, read: (g: MemoryGpu) => Answer<T>): Answer<T> {
    const e = this.check(call, d);
    if (e) return e;
    const g = this.gpus[d.index];
    return g ? read(g) : nvmlErr(call, NVML.INVALID_ARGUMENT);
  }

  init(): Answer<void> {
    const e = this.check('init');
    if (e) return e;
    this.initialised = true;
  }

  shutdown(): Answer<void> {
    this.initialised = false;
  }

  driverVersion(): Answer<string> {
    return this.check('driverVersion') ?? '580.159.04';
  }

  deviceCount(): Answer<number> {
    return this.check('deviceCount') ?? this.gpus.length;
  }

  handle(index: number): Answer<DeviceHandle> {
    return this.gpu('handle', { index }, () => ({ index }));
  }

  uuid(d: DeviceHandle): Answer<string> {
    return this.gpu('uuid', d, (g) => g.uuid);
  }

  name(d: DeviceHandle): Answer<string> {
    return this.gpu('name', d, (g) => g.name);
  }

  pciInfo(d: DeviceHandle) {
    return this.gpu('pciInfo', d, (g) => ({ busId: g.busId, pciDeviceId: 0x233510de }));
  }

  eccEnabled(d: DeviceHandle): Answer<boolean> {
    return this.gpu('eccEnabled', d, (g) => g.eccEnabled);
  }

  totalEccErrors(d: DeviceHandle, errorType: 0 | 1, counterType: 0 | 1): Answer<number> {
    return this.gpu('totalEccErrors', d, (g) => (counterType === 0 ? g.volatileEcc[errorType] : 0));
  }

  remappedRows(d: DeviceHandle): Answer<RemappedRows> {
    return this.gpu('remappedRows', d, (g) =>
      g.remapped === 'not-supported' ? nvmlErr('remappedRows', NVML.NOT_SUPPORTED) : g.remapped,
    );
  }

  retiredPages(d: DeviceHandle, cause: 0 | 1): Answer<number> {
    return this.gpu('retiredPages', d, (g) =>
      g.retired === 'not-supported'
        ? nvmlErr('retiredPages', NVML.NOT_SUPPORTED)
        : cause === 0
          ? g.retired.sbe
          : g.retired.dbe,
    );
  }

  retiredPagesPending(d: DeviceHandle): Answer<boolean> {
    return this.gpu('retiredPagesPending', d, (g) =>
      g.retired === 'not-supported' ? nvmlErr('retiredPagesPending', NVML.NOT_SUPPORTED) : g.retired.pending,
    );
  }

  clocksEventReasons(d: DeviceHandle): Answer<number> {
    return this.gpu('clocksEventReasons', d, (g) => g.clocksEventReasons);
  }

  pcieWidth(d: DeviceHandle) {
    return this.gpu('pcieWidth', d, () => ({ current: 16, max: 16 }));
  }

  pcieGeneration(d: DeviceHandle) {
    return this.gpu('pcieGeneration', d, () => ({ current: 5, max: 5 }));
  }

  pcieReplayCounter(d: DeviceHandle): Answer<number> {
    return this.gpu('pcieReplayCounter', d, () => 2);
  }

  nvLinkActive(d: DeviceHandle): Answer<boolean> {
    return this.gpu('nvLinkActive', d, () => nvmlErr('nvLinkActive', NVML.NOT_SUPPORTED));
  }

  fabricInfo(d: DeviceHandle): Answer<FabricInfo> {
    return this.gpu('fabricInfo', d, () => nvmlErr('fabricInfo', NVML.NOT_SUPPORTED));
  }

  validateInforom(d: DeviceHandle): Answer<void> {
    return this.gpu('validateInforom', d, () => undefined);
  }

  fieldValues(d: DeviceHandle): Answer<FieldValue[]> {
    return this.gpu('fieldValues', d, () => nvmlErr('fieldValues', NVML.NOT_SUPPORTED));
  }

  supportedEventTypes(d: DeviceHandle): Answer<number> {
    return this.gpu('supportedEventTypes', d, (g) => g.supportedEvents);
  }

  eventSetCreate(): Answer<EventSet> {
    return this.check('eventSetCreate') ?? { id: ++this.sets };
  }

  registerEvents(d: DeviceHandle): Answer<void> {
    return this.gpu('registerEvents', d, () => undefined);
  }

  eventWait(_set: EventSet, timeoutMs: number): Promise<Answer<NvmlEvent>> {
    this.calls.push('eventWait');
    const next = this.queue.shift();
    if (next) return Promise.resolve(next);
    this.pendingWaits++;
    return new Promise((resolve) => {
      let timer: TimerHandle | undefined;
      const done = (a: Answer<NvmlEvent>) => {
        timer?.cancel();
        this.pendingWaits--;
        resolve(a);
      };
      this.waiter = done;
      timer = this.clock.setTimeout(() => {
        if (this.waiter === done) this.waiter = undefined;
        done(nvmlErr('eventWait', NVML.TIMEOUT));
      }, timeoutMs);
    });
  }

  eventSetFree(): Answer<void> {
    this.calls.push('eventSetFree');
  }
}
