/**
 * The few CRI runtime.v1 messages the containerd probe needs, in protobuf wire format. Field numbers
 * follow k8s.io/cri-api pkg/apis/runtime/v1/api.proto:
 *
 *   message VersionRequest   { string version = 1; }
 *   message VersionResponse  { string version = 1; string runtime_name = 2; string runtime_version = 3;
 *                              string runtime_api_version = 4; }
 *   message StatusRequest    { bool verbose = 1; }
 *   message StatusResponse   { RuntimeStatus status = 1; map<string, string> info = 2; ... }
 *   message RuntimeStatus    { repeated RuntimeCondition conditions = 1; }
 *   message RuntimeCondition { string type = 1; bool status = 2; string reason = 3; string message = 4; }
 *
 * Unknown fields are skipped, so newer runtimes with more fields decode fine.
 */

export const RUNTIME_SERVICE = '/runtime.v1.RuntimeService';

export interface VersionResponse {
  readonly version: string;
  readonly runtimeName: string;
  readonly runtimeVersion: string;
  readonly runtimeApiVersion: string;
}

export interface RuntimeCondition {
  readonly type: string;
  readonly status: boolean;
  readonly reason: string;
  readonly message: string;
}

const VARINT = 0;
const FIXED64 = 1;
const BYTES = 2;
const FIXED32 = 5;

type Fields = Map<number, (bigint | Buffer)[]>;

function readVarint(buf: Buffer, at: number): [bigint, number] {
  let value = 0n;
  for (let shift = 0n, i = at; i < buf.length && shift < 70n; i++, shift += 7n) {
    const byte = buf[i] as number;
    value |= BigInt(byte & 0x7f) << shift;
    if ((byte & 0x80) === 0) return [value, i + 1];
  }
  throw new Error('protobuf: bad varint');
}

/** Splits a message into its fields: varints as bigint, length-delimited as Buffer. */
export function decodeFields(buf: Buffer): Fields {
  const out: Fields = new Map();
  let at = 0;
  while (at < buf.length) {
    const [key, next] = readVarint(buf, at);
    at = next;
    const field = Number(key >> 3n);
    const wire = Number(key & 7n);
    let value: bigint | Buffer | undefined;
    if (wire === VARINT) [value, at] = readVarint(buf, at);
    else if (wire === FIXED64) at += 8;
    else if (wire === FIXED32) at += 4;
    else if (wire === BYTES) {
      const [length, start] = readVarint(buf, at);
      at = start + Number(length);
      value = buf.subarray(start, at);
    } else throw new Error(`protobuf: unsupported wire type ${wire}`);
    if (at > buf.length) throw new Error('protobuf: truncated message');
    if (value !== undefined) out.set(field, [...(out.get(field) ?? []), value]);
  }
  return out;
}

function str(fields: Fields, n: number): string {
  const v = fields.get(n)?.at(-1);
  return Buffer.isBuffer(v) ? v.toString('utf8') : '';
}

function bool(fields: Fields, n: number): boolean {
  const v = fields.get(n)?.at(-1);
  return typeof v === 'bigint' && v !== 0n;
}

function messages(fields: Fields, n: number): Buffer[] {
  return (fields.get(n) ?? []).filter((v): v is Buffer => Buffer.isBuffer(v));
}

export function decodeVersionResponse(buf: Buffer): VersionResponse {
  const f = decodeFields(buf);
  return {
    version: str(f, 1),
    runtimeName: str(f, 2),
    runtimeVersion: str(f, 3),
    runtimeApiVersion: str(f, 4),
  };
}

export function decodeStatusResponse(buf: Buffer): RuntimeCondition[] {
  const status = messages(decodeFields(buf), 1).at(-1);
  if (!status) return [];
  return messages(decodeFields(status), 1).map((c) => {
    const f = decodeFields(c);
    return { type: str(f, 1), status: bool(f, 2), reason: str(f, 3), message: str(f, 4) };
  });
}

function varint(value: number): Buffer {
  const bytes: number[] = [];
  let v = value;
  while (v >= 0x80) {
    bytes.push((v & 0x7f) | 0x80);
    v = Math.floor(v / 128);
  }
  bytes.push(v);
  return Buffer.from(bytes);
}

/** A length-delimited field; empty strings and messages are omitted, as proto3 does. */
export function bytesField(field: number, value: Buffer | string): Buffer {
  const data = typeof value === 'string' ? Buffer.from(value, 'utf8') : value;
  if (data.length === 0) return Buffer.alloc(0);
  return Buffer.concat([varint((field << 3) | BYTES), varint(data.length), data]);
}

/** An embedded message; written even when empty, since an element of a repeated field still counts. */
export function messageField(field: number, value: Buffer): Buffer {
  return Buffer.concat([varint((field << 3) | BYTES), varint(value.length), value]);
}

export function boolField(field: number, value: boolean): Buffer {
  return value ? Buffer.concat([varint((field << 3) | VARINT), Buffer.from([1])]) : Buffer.alloc(0);
}

export function encodeVersionRequest(version = 'v1'): Buffer {
  return bytesField(1, version);
}

export function encodeStatusRequest(verbose = false): Buffer {
  return boolField(1, verbose);
}

/** Used by fakes in tests, and documents the layout the decoders expect. */
export function encodeVersionResponse(v: VersionResponse): Buffer {
  return Buffer.concat([
    bytesField(1, v.version),
    bytesField(2, v.runtimeName),
    bytesField(3, v.runtimeVersion),
    bytesField(4, v.runtimeApiVersion),
  ]);
}

export function encodeStatusResponse(conditions: readonly RuntimeCondition[]): Buffer {
  const encoded = conditions.map((c) =>
    messageField(
      1,
      Buffer.concat([
        bytesField(1, c.type),
        boolField(2, c.status),
        bytesField(3, c.reason),
        bytesField(4, c.message),
      ]),
    ),
  );
  return messageField(1, Buffer.concat(encoded));
}
