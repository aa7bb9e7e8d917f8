/**
 * The protobuf wire format (https://protobuf.dev/programming-guides/encoding/), only as far as the
 * agent's hand-written messages need it: the CRI probe and the OTLP event sink. Decoding keeps varints,
 * fixed64 and length-delimited fields and skips fixed32 ones; unknown fields are kept too, so newer
 * peers with more fields decode fine.
 */

const VARINT = 0;
const FIXED64 = 1;
const BYTES = 2;
const FIXED32 = 5;

export type Fields = Map<number, (bigint | Buffer)[]>;

function readVarint(buf: Buffer, at: number): [bigint, number] {
  let value = 0n;
  for (let shift = 0n, i = at; i < buf.length && shift < 70n; i++, shift += 7n) {
    const byte = buf[i] as number;
    value |= BigInt(byte & 0x7f) << shift;
    if ((byte & 0x80) === 0) return [value, i + 1];
  }
  throw new Error('protobuf: bad varint');
}

/**
 * Splits a message into its fields: varints and fixed64 as bigint, length-delimited as Buffer. Linear in
 * the message (values are appended in place; a peer may repeat a field as often as it likes).
 */
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
    else if (wire === FIXED64) {
      if (at + 8 > buf.length) throw new Error('protobuf: truncated message');
      value = buf.readBigUInt64LE(at);
      at += 8;
    } else if (wire === FIXED32) at += 4;
    else if (wire === BYTES) {
      const [length, start] = readVarint(buf, at);
      at = start + Number(length);
      value = buf.subarray(start, at);
    } else throw new Error(`protobuf: unsupported wire type ${wire}`);
    if (at > buf.length) throw new Error('protobuf: truncated message');
    if (value === undefined) continue;
    const values = out.get(field);
    if (values) values.push(value);
    else out.set(field, [value]);
  }
  return out;
}

/** The last value of a string field ("" when absent, as proto3 reads it). */
export function stringOf(fields: Fields, n: number): string {
  const v = fields.get(n)?.at(-1);
  return Buffer.isBuffer(v) ? v.toString('utf8') : '';
}

/** The last value of a varint or fixed64 field (0n when absent). */
export function intOf(fields: Fields, n: number): bigint {
  const v = fields.get(n)?.at(-1);
  return typeof v === 'bigint' ? v : 0n;
}

/** Every embedded message of a (repeated) message field. */
export function messagesOf(fields: Fields, n: number): Buffer[] {
  return (fields.get(n) ?? []).filter((v): v is Buffer => Buffer.isBuffer(v));
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
  return messageField(field, data);
}

/**
 * An embedded message (or a string that must be written even when empty, like a oneof member);
 * always written, since an element of a repeated field counts even when empty.
 */
export function messageField(field: number, value: Buffer | string): Buffer {
  const data = typeof value === 'string' ? Buffer.from(value, 'utf8') : value;
  return Buffer.concat([varint((field << 3) | BYTES), varint(data.length), data]);
}

export function boolField(field: number, value: boolean): Buffer {
  return value ? Buffer.concat([varint((field << 3) | VARINT), Buffer.from([1])]) : Buffer.alloc(0);
}

/**
 * A non-negative integer (uint64, or an int64/enum that is never negative). 0 is omitted, as proto3
 * does, unless `keepZero` (a oneof member is written even at its default).
 */
export function varintField(field: number, value: number, keepZero = false): Buffer {
  if (!(value > 0) && !(keepZero && value === 0)) return Buffer.alloc(0);
  return Buffer.concat([varint((field << 3) | VARINT), varint(Math.floor(value))]);
}

/** A fixed64 field, e.g. OTLP's nanosecond timestamps; 0 is omitted. */
export function fixed64Field(field: number, value: bigint): Buffer {
  if (value === 0n) return Buffer.alloc(0);
  const data = Buffer.alloc(8);
  data.writeBigUInt64LE(value);
  return Buffer.concat([varint((field << 3) | FIXED64), data]);
}
