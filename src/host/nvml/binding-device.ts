import {
  type Answer,
  type DeviceHandle,
  type FabricInfo,
  type FieldValue,
  NVML,
  type PciInfo,
} from './api.ts';
import type { HandleTable } from './binding-handles.ts';
import {
  cString,
  decodeFabricInfo,
  decodeFieldValues,
  decodePciInfo,
  encodeFieldRequests,
  fabricInfoRequest,
  NAME_BUFFER,
  PCI_INFO_SIZE,
  UUID_BUFFER,
} from './binding-structs.ts';
import type { NvmlSymbol, NvmlSymbols } from './binding-symbols.ts';

const u32 = (): Buffer => Buffer.alloc(4);
const u64 = (): Buffer => Buffer.alloc(8);

/** The per-GPU calls of the Nvml interface (api.ts), each one NVML call on a handle this binding gave out. */
export class DeviceCalls {
  private readonly sym: NvmlSymbols;
  private readonly handles: HandleTable;

  constructor(sym: NvmlSymbols, handles: HandleTable) {
    this.sym = sym;
    this.handles = handles;
  }

  /** Calls name(device, ...args): undefined on SUCCESS, else the error; a foreign handle is refused. */
  private onDevice(name: NvmlSymbol, d: DeviceHandle, ...args: unknown[]): ReturnType<NvmlSymbols['check']> {
    const address = this.handles.deviceAddress(d);
    if (address === undefined) return this.sym.error(name, NVML.INVALID_ARGUMENT);
    return this.sym.check(name, address, ...args);
  }

  private text(name: NvmlSymbol, d: DeviceHandle, size: number): Answer<string> {
    const buf = Buffer.alloc(size);
    return this.onDevice(name, d, buf, size) ?? cString(buf);
  }

  private uint(name: NvmlSymbol, d: DeviceHandle): Answer<number> {
    const buf = u32();
    return this.onDevice(name, d, buf) ?? buf.readUInt32LE(0);
  }

  private pair(
    current: NvmlSymbol,
    max: NvmlSymbol,
    d: DeviceHandle,
  ): Answer<{ current: number; max: number }> {
    const c = this.uint(current, d);
    if (typeof c !== 'number') return c;
    const m = this.uint(max, d);
    return typeof m === 'number' ? { current: c, max: m } : m;
  }

  uuid(d: DeviceHandle): Answer<string> {
    return this.text('nvmlDeviceGetUUID', d, UUID_BUFFER);
  }

  name(d: DeviceHandle): Answer<string> {
    return this.text('nvmlDeviceGetName', d, NAME_BUFFER);
  }

  pciInfo(d: DeviceHandle): Answer<PciInfo> {
    const buf = Buffer.alloc(PCI_INFO_SIZE);
    return this.onDevice('nvmlDeviceGetPciInfo_v3', d, buf) ?? decodePciInfo(buf);
  }

  eccEnabled(d: DeviceHandle): Answer<boolean> {
    const [current, pending] = [u32(), u32()];
    return this.onDevice('nvmlDeviceGetEccMode', d, current, pending) ?? current.readInt32LE(0) === 1;
  }

  totalEccErrors(d: DeviceHandle, errorType: 0 | 1, counterType: 0 | 1): Answer<number> {
    const buf = u64();
    const err = this.onDevice('nvmlDeviceGetTotalEccErrors', d, errorType, counterType, buf);
    return err ?? Number(buf.readBigUInt64LE(0));
  }

  remappedRows(
    d: DeviceHandle,
  ): Answer<{ correctable: number; uncorrectable: number; pending: boolean; failure: boolean }> {
    const [corr, unc, pending, failure] = [u32(), u32(), u32(), u32()];
    const err = this.onDevice('nvmlDeviceGetRemappedRows', d, corr, unc, pending, failure);
    return (
      err ?? {
        correctable: corr.readUInt32LE(0),
        uncorrectable: unc.readUInt32LE(0),
        pending: pending.readUInt32LE(0) !== 0,
        failure: failure.readUInt32LE(0) !== 0,
      }
    );
  }

  /** The count alone: a zero-length buffer, which NVML answers with INSUFFICIENT_SIZE when pages exist. */
  retiredPages(d: DeviceHandle, cause: 0 | 1): Answer<number> {
    const count = u32();
    const err = this.onDevice('nvmlDeviceGetRetiredPages', d, cause, count, null);
    return err && err.code !== NVML.INSUFFICIENT_SIZE ? err : count.readUInt32LE(0);
  }

  retiredPagesPending(d: DeviceHandle): Answer<boolean> {
    const buf = u32();
    return this.onDevice('nvmlDeviceGetRetiredPagesPendingStatus', d, buf) ?? buf.readInt32LE(0) === 1;
  }

  clocksEventReasons(d: DeviceHandle): Answer<number> {
    const buf = u64();
    return this.onDevice('nvmlDeviceGetCurrentClocksEventReasons', d, buf) ?? Number(buf.readBigUInt64LE(0));
  }

  pcieWidth(d: DeviceHandle): Answer<{ current: number; max: number }> {
    return this.pair('nvmlDeviceGetCurrPcieLinkWidth', 'nvmlDeviceGetMaxPcieLinkWidth', d);
  }

  pcieGeneration(d: DeviceHandle): Answer<{ current: number; max: number }> {
    return this.pair('nvmlDeviceGetCurrPcieLinkGeneration', 'nvmlDeviceGetMaxPcieLinkGeneration', d);
  }

  pcieReplayCounter(d: DeviceHandle): Answer<number> {
    return this.uint('nvmlDeviceGetPcieReplayCounter', d);
  }

  nvLinkActive(d: DeviceHandle, link: number): Answer<boolean> {
    const buf = u32();
    return this.onDevice('nvmlDeviceGetNvLinkState', d, link, buf) ?? buf.readInt32LE(0) === 1;
  }

  fabricInfo(d: DeviceHandle): Answer<FabricInfo> {
    const buf = fabricInfoRequest();
    return this.onDevice('nvmlDeviceGetGpuFabricInfoV', d, buf) ?? decodeFabricInfo(buf);
  }

  validateInforom(d: DeviceHandle): Answer<void> {
    return this.onDevice('nvmlDeviceValidateInforom', d);
  }

  fieldValues(
    d: DeviceHandle,
    fields: readonly { fieldId: number; scopeId?: number }[],
  ): Answer<FieldValue[]> {
    if (fields.length === 0) return [];
    const buf = encodeFieldRequests(fields);
    return (
      this.onDevice('nvmlDeviceGetFieldValues', d, fields.length, buf) ??
      decodeFieldValues(buf, fields.length)
    );
  }

  supportedEventTypes(d: DeviceHandle): Answer<number> {
    const buf = u64();
    return this.onDevice('nvmlDeviceGetSupportedEventTypes', d, buf) ?? Number(buf.readBigUInt64LE(0));
  }
}
