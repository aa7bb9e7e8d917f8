import type { FabricInfo, FieldValue, NvmlEvent, PciInfo } from './api.ts';

/**
 * NVML's structs read from the Buffers the binding passes, at the offsets of nvml.h (NVML API 13) on
 * x86_64 and aarch64 alike (LP64, little-endian; ../shared/reference/gpu.md 2.2, checked there with gcc's
 * sizeof/offsetof). The fake NVML's static asserts pin the same offsets.
 */
export const PCI_INFO_SIZE = 68;
export const EVENT_DATA_SIZE = 32;
export const FIELD_VALUE_SIZE = 40;
export const FABRIC_INFO_SIZE = 40;
/** NVML_STRUCT_VERSION(GpuFabricInfo, 3): sizeof | 3 << 24. */
export const FABRIC_INFO_V3 = 0x03000028;
/** NVML_DEVICE_UUID_V2_BUFFER_SIZE, NVML_DEVICE_NAME_V2_BUFFER_SIZE, NVML_SYSTEM_DRIVER_VERSION_BUFFER_SIZE. */
export const UUID_BUFFER = 96;
export const NAME_BUFFER = 96;
export const DRIVER_VERSION_BUFFER = 80;

/** A NUL-terminated C string in buf, from offset, at most length bytes. */
export function cString(buf: Buffer, offset = 0, length = buf.length - offset): string {
  const end = buf.indexOf(0, offset);
  return buf.toString('latin1', offset, end < 0 || end > offset + length ? offset + length : end);
}

/** nvmlPciInfo_t: busId at 36 (char[32]), pciDeviceId at 28. */
export function decodePciInfo(buf: Buffer): PciInfo {
  return { busId: cString(buf, 36, 32), pciDeviceId: buf.readUInt32LE(28) };
}

/** nvmlEventData_t: device 0 (pointer), eventType 8, eventData 16 (u64), gpu/compute instance 24, 28. */
export function decodeEventData(buf: Buffer, indexOf: (address: bigint) => number | undefined): NvmlEvent {
  return {
    index: indexOf(buf.readBigUInt64LE(0)),
    eventType: Number(buf.readBigUInt64LE(8)),
    eventData: Number(buf.readBigUInt64LE(16)),
    gpuInstanceId: buf.readUInt32LE(24),
    computeInstanceId: buf.readUInt32LE(28),
  };
}

/** nvmlFieldValue_t requests: fieldId at 0, scopeId at 4; NVML fills the rest. */
export function encodeFieldRequests(fields: readonly { fieldId: number; scopeId?: number }[]): Buffer {
  const buf = Buffer.alloc(FIELD_VALUE_SIZE * fields.length);
  fields.forEach((f, i) => {
    buf.writeUInt32LE(f.fieldId, i * FIELD_VALUE_SIZE);
    buf.writeUInt32LE(f.scopeId ?? 0, i * FIELD_VALUE_SIZE + 4);
  });
  return buf;
}

/** nvmlValue_t at `at`, read as nvmlValueType_t says (0 double … 6 unsigned short). */
function readValue(buf: Buffer, at: number, valueType: number): number {
  switch (valueType) {
    case 0:
      return buf.readDoubleLE(at);
    case 1:
      return buf.readUInt32LE(at);
    case 4:
      return Number(buf.readBigInt64LE(at));
    case 5:
      return buf.readInt32LE(at);
    case 6:
      return buf.readUInt16LE(at);
    default:
      // 2 unsigned long (8 bytes on LP64) and 3 unsigned long long.
      return Number(buf.readBigUInt64LE(at));
  }
}

/** nvmlFieldValue_t: fieldId 0, scopeId 4, valueType 24, nvmlReturn 28, value 32 (8-byte union). */
export function decodeFieldValues(buf: Buffer, count: number): FieldValue[] {
  const out: FieldValue[] = [];
  for (let i = 0; i < count; i++) {
    const at = i * FIELD_VALUE_SIZE;
    out.push({
      fieldId: buf.readUInt32LE(at),
      scopeId: buf.readUInt32LE(at + 4),
      ret: buf.readInt32LE(at + 28),
      value: readValue(buf, at + 32, buf.readInt32LE(at + 24)),
    });
  }
  return out;
}

/** nvmlGpuFabricInfo_v3_t, version set before the call: status 20, state 28, healthMask 32, summary 36. */
export function fabricInfoRequest(): Buffer {
  const buf = Buffer.alloc(FABRIC_INFO_SIZE);
  buf.writeUInt32LE(FABRIC_INFO_V3, 0);
  return buf;
}

export function decodeFabricInfo(buf: Buffer): FabricInfo {
  return {
    state: buf.readUInt8(28),
    status: buf.readInt32LE(20),
    healthMask: buf.readUInt32LE(32),
    healthSummary: buf.readUInt8(36),
  };
}
