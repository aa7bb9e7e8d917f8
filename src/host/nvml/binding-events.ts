import { errorMessage } from '../../core/errors.ts';
import { type Answer, type DeviceHandle, type EventSet, NVML, NvmlError, type NvmlEvent } from './api.ts';
import type { HandleTable } from './binding-handles.ts';
import { decodeEventData, EVENT_DATA_SIZE } from './binding-structs.ts';
import type { NvmlSymbols } from './binding-symbols.ts';

const WAIT = 'nvmlEventSetWait_v2';

/**
 * NVML's event sets. The wait blocks in the driver up to its timeout, so it runs through koffi's async
 * call on a libuv pool thread (as the kmsg poll does) and the event loop keeps running meanwhile.
 */
export class EventCalls {
  private readonly sym: NvmlSymbols;
  private readonly handles: HandleTable;

  constructor(sym: NvmlSymbols, handles: HandleTable) {
    this.sym = sym;
    this.handles = handles;
  }

  eventSetCreate(): Answer<EventSet> {
    const out = Buffer.alloc(8);
    return this.sym.check('nvmlEventSetCreate', out) ?? this.handles.addSet(out.readBigUInt64LE(0));
  }

  registerEvents(d: DeviceHandle, types: number, set: EventSet): Answer<void> {
    const device = this.handles.deviceAddress(d);
    const address = this.handles.setAddress(set);
    if (device === undefined || address === undefined) {
      return this.sym.error('nvmlDeviceRegisterEvents', NVML.INVALID_ARGUMENT);
    }
    return this.sym.check('nvmlDeviceRegisterEvents', device, BigInt(types), address);
  }

  /** Resolves with the next event, or TIMEOUT (10) when none came within timeoutMs, or another error. */
  eventWait(set: EventSet, timeoutMs: number): Promise<Answer<NvmlEvent>> {
    const address = this.handles.setAddress(set);
    if (address === undefined) return Promise.resolve(this.sym.error(WAIT, NVML.INVALID_ARGUMENT));
    const wait = this.sym.fn(WAIT);
    if (!wait) return Promise.resolve(this.sym.error(WAIT, NVML.FUNCTION_NOT_FOUND));
    // The pool thread writes into data until the callback; the closure keeps it from being collected.
    const data = Buffer.alloc(EVENT_DATA_SIZE);
    return new Promise((resolve) => {
      wait.async(address, data, timeoutMs, (err: unknown, code: number) => {
        if (err) resolve(new NvmlError(WAIT, NVML.UNKNOWN, `koffi: ${errorMessage(err)}`));
        else if (code !== NVML.SUCCESS) resolve(this.sym.error(WAIT, code));
        else resolve(decodeEventData(data, (a) => this.handles.indexOf(a)));
      });
    });
  }

  eventSetFree(set: EventSet): Answer<void> {
    const address = this.handles.setAddress(set);
    if (address === undefined) return this.sym.error('nvmlEventSetFree', NVML.INVALID_ARGUMENT);
    const err = this.sym.check('nvmlEventSetFree', address);
    if (!err) this.handles.removeSet(set);
    return err;
  }
}
