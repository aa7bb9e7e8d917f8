/**
 * D-Bus value marshalling (the "Message Protocol" part of the D-Bus specification) for any signature. Values map to JS as: integers up to 32 bits and
 * doubles → number, 64-bit integers → bigint, b → boolean, s/o/g → string, v → Variant, arrays and
 * structs → arrays, dict entries → [key, value] pairs.
 */

export interface Variant {
  readonly signature: string;
  readonly value: DbusValue;
}

export type DbusValue = number | bigint | boolean | string | Variant | readonly DbusValue[];

const ALIGN: Readonly<Record<string, number>> = {
  y: 1,
  b: 4,
  n: 2,
  q: 2,
  i: 4,
  u: 4,
  x: 8,
  t: 8,
  d: 8,
  h: 4,
  s: 4,
  o: 4,
  g: 1,
  a: 4,
  '(': 8,
  '{': 8,
  v: 1,
};

function alignOf(type: string): number {
  const a = ALIGN[type[0] ?? ''];
  if (a === undefined) throw new Error(`unsupported D-Bus type ${JSON.stringify(type)}`);
  return a;
}

/** The length of the single complete type at the start of `sig`. */
function completeTypeLength(sig: string, start: number): number {
  const c = sig[start];
  if (c === 'a') return 1 + completeTypeLength(sig, start + 1);
  if (c !== '(' && c !== '{') {
    if (c === undefined || ALIGN[c] === undefined)
      throw new Error(`bad D-Bus signature ${JSON.stringify(sig)}`);
    return 1;
  }
  const close = c === '(' ? ')' : '}';
  let i = start + 1;
  while (sig[i] !== close) {
    if (i >= sig.length) throw new Error(`unterminated D-Bus signature ${JSON.stringify(sig)}`);
    i += completeTypeLength(sig, i);
  }
  return i + 1 - start;
}

/** "sa{sv}u" → ["s", "a{sv}", "u"]. */
export function splitSignature(sig: string): string[] {
  const out: string[] = [];
  for (let i = 0; i < sig.length; ) {
    const n = completeTypeLength(sig, i);
    out.push(sig.slice(i, i + n));
    i += n;
  }
  return out;
}

export class Writer {
  private buf = Buffer.alloc(256);
  length = 0;

  private reserve(n: number): void {
    if (this.length + n <= this.buf.length) return;
    const next = Buffer.alloc(Math.max(this.buf.length * 2, this.length + n));
    this.buf.copy(next, 0, 0, this.length);
    this.buf = next;
  }

  align(n: number): void {
    const pad = (n - (this.length % n)) % n;
    this.reserve(pad);
    this.buf.fill(0, this.length, this.length + pad);
    this.length += pad;
  }

  put(n: number, write: (buf: Buffer, at: number) => void): void {
    this.reserve(n);
    write(this.buf, this.length);
    this.length += n;
  }

  patchU32(at: number, value: number): void {
    this.buf.writeUInt32LE(value, at);
  }

  bytes(): Buffer {
    return this.buf.subarray(0, this.length);
  }
}

export function writeString(w: Writer, value: DbusValue, lengthBytes: 1 | 4): void {
  const bytes = Buffer.from(String(value), 'utf8');
  if (lengthBytes === 1) w.put(1, (b, at) => b.writeUInt8(bytes.length, at));
  else w.put(4, (b, at) => b.writeUInt32LE(bytes.length, at));
  w.put(bytes.length + 1, (b, at) => {
    bytes.copy(b, at);
    b[at + bytes.length] = 0;
  });
}

type ScalarWriter = readonly [size: number, write: (b: Buffer, at: number, v: DbusValue) => void];

/** Fixed-size types: their size and how to write them, little-endian. */
const FIXED: Readonly<Record<string, ScalarWriter>> = {
  y: [1, (b, at, v) => b.writeUInt8(Number(v), at)],
  b: [4, (b, at, v) => b.writeUInt32LE(v ? 1 : 0, at)],
  n: [2, (b, at, v) => b.writeInt16LE(Number(v), at)],
  q: [2, (b, at, v) => b.writeUInt16LE(Number(v), at)],
  i: [4, (b, at, v) => b.writeInt32LE(Number(v), at)],
  u: [4, (b, at, v) => b.writeUInt32LE(Number(v), at)],
  h: [4, (b, at, v) => b.writeUInt32LE(Number(v), at)],
  x: [8, (b, at, v) => b.writeBigInt64LE(BigInt(v as bigint), at)],
  t: [8, (b, at, v) => b.writeBigUInt64LE(BigInt(v as bigint), at)],
  d: [8, (b, at, v) => b.writeDoubleLE(Number(v), at)],
};

export function writeScalar(w: Writer, type: string, value: DbusValue): void {
  const fixed = FIXED[type];
  if (fixed) {
    const [size, write] = fixed;
    w.put(size, (b, at) => write(b, at, value));
  } else if (type === 's' || type === 'o') {
    writeString(w, value, 4);
  } else if (type === 'g') {
    writeString(w, value, 1);
  } else {
    throw new Error(`unsupported D-Bus type ${type}`);
  }
}

export function writeValue(w: Writer, type: string, value: DbusValue): void {
  w.align(alignOf(type));
  const c = type[0];
  if (c === 'v') {
    const v = value as Variant;
    writeString(w, v.signature, 1);
    writeValue(w, v.signature, v.value);
  } else if (c === 'a') {
    const at = w.length;
    w.put(4, () => undefined);
    const elem = type.slice(1);
    w.align(alignOf(elem));
    const start = w.length;
    for (const item of value as readonly DbusValue[]) writeValue(w, elem, item);
    w.patchU32(at, w.length - start);
  } else if (c === '(' || c === '{') {
    const members = splitSignature(type.slice(1, -1));
    const items = value as readonly DbusValue[];
    members.forEach((m, i) => {
      writeValue(w, m, items[i] as DbusValue);
    });
  } else {
    writeScalar(w, type, value);
  }
}

type Read = (b: Buffer, at: number) => DbusValue;

/** Fixed-size numeric types: size, little-endian reader, big-endian reader. */
const READERS: Readonly<Record<string, readonly [number, Read, Read]>> = {
  y: [1, (b, at) => b.readUInt8(at), (b, at) => b.readUInt8(at)],
  n: [2, (b, at) => b.readInt16LE(at), (b, at) => b.readInt16BE(at)],
  q: [2, (b, at) => b.readUInt16LE(at), (b, at) => b.readUInt16BE(at)],
  i: [4, (b, at) => b.readInt32LE(at), (b, at) => b.readInt32BE(at)],
  u: [4, (b, at) => b.readUInt32LE(at), (b, at) => b.readUInt32BE(at)],
  h: [4, (b, at) => b.readUInt32LE(at), (b, at) => b.readUInt32BE(at)],
  x: [8, (b, at) => b.readBigInt64LE(at), (b, at) => b.readBigInt64BE(at)],
  t: [8, (b, at) => b.readBigUInt64LE(at), (b, at) => b.readBigUInt64BE(at)],
  d: [8, (b, at) => b.readDoubleLE(at), (b, at) => b.readDoubleBE(at)],
};

export class Reader {
  pos = 0;
  private readonly buf: Buffer;
  private readonly little: boolean;

  constructor(buf: Buffer, little: boolean) {
    this.buf = buf;
    this.little = little;
  }

  align(n: number): void {
    this.pos += (n - (this.pos % n)) % n;
  }

  take(n: number): number {
    if (this.pos + n > this.buf.length) throw new Error('truncated D-Bus message');
    const at = this.pos;
    this.pos += n;
    return at;
  }

  u32(): number {
    const at = this.take(4);
    return this.little ? this.buf.readUInt32LE(at) : this.buf.readUInt32BE(at);
  }

  scalar(type: string): DbusValue {
    const reader = READERS[type];
    if (reader) {
      const [size, le, be] = reader;
      const at = this.take(size);
      return this.little ? le(this.buf, at) : be(this.buf, at);
    }
    if (type === 'b') return this.u32() !== 0;
    if (type === 's' || type === 'o') return this.string(this.u32());
    if (type === 'g') return this.string(this.buf.readUInt8(this.take(1)));
    throw new Error(`unsupported D-Bus type ${type}`);
  }

  private string(length: number): string {
    const at = this.take(length + 1);
    return this.buf.toString('utf8', at, at + length);
  }

  value(type: string): DbusValue {
    this.align(alignOf(type));
    const c = type[0];
    if (c === 'v') {
      const signature = this.scalar('g') as string;
      return { signature, value: this.value(signature) };
    }
    if (c === 'a') {
      const length = this.u32();
      const elem = type.slice(1);
      this.align(alignOf(elem));
      const end = this.pos + length;
      const items: DbusValue[] = [];
      while (this.pos < end) items.push(this.value(elem));
      return items;
    }
    if (c === '(' || c === '{') return splitSignature(type.slice(1, -1)).map((m) => this.value(m));
    return this.scalar(type);
  }
}
