import {
  type DbusValue,
  Reader,
  splitSignature,
  type Variant,
  Writer,
  writeScalar,
  writeValue,
} from './codec.ts';

/** D-Bus messages: enough to call methods and read replies, signals and errors. */

export const MessageType = { MethodCall: 1, MethodReturn: 2, Error: 3, Signal: 4 } as const;

export const NO_REPLY_EXPECTED = 0x1;

export interface DbusMessage {
  readonly type: number;
  readonly flags: number;
  readonly serial: number;
  readonly path?: string | undefined;
  readonly interface?: string | undefined;
  readonly member?: string | undefined;
  readonly errorName?: string | undefined;
  readonly replySerial?: number | undefined;
  readonly destination?: string | undefined;
  readonly sender?: string | undefined;
  readonly signature?: string | undefined;
  readonly body: readonly DbusValue[];
}

/** Header field codes and the type each one carries. */
const FIELDS = [
  [1, 'path', 'o'],
  [2, 'interface', 's'],
  [3, 'member', 's'],
  [4, 'errorName', 's'],
  [5, 'replySerial', 'u'],
  [6, 'destination', 's'],
  [7, 'sender', 's'],
  [8, 'signature', 'g'],
] as const;

const MAX_MESSAGE = 128 * 1024 * 1024;

export function encodeMessage(m: DbusMessage): Buffer {
  const fields: DbusValue[] = [];
  for (const [code, key, sig] of FIELDS) {
    const v = m[key];
    if (v !== undefined) fields.push([code, { signature: sig, value: v }]);
  }
  const body = new Writer();
  splitSignature(m.signature ?? '').forEach((t, i) => {
    writeValue(body, t, m.body[i] as DbusValue);
  });
  const w = new Writer();
  w.put(4, (b, at) => {
    // Little-endian marker, message type, flags, protocol version 1.
    b.set([0x6c, m.type, m.flags, 1], at);
  });
  writeScalar(w, 'u', body.length);
  writeScalar(w, 'u', m.serial);
  writeValue(w, 'a(yv)', fields);
  w.align(8);
  return Buffer.concat([w.bytes(), body.bytes()]);
}

/** Bytes needed for the message at the start of `buf`, or undefined while the fixed header is incomplete. */
export function messageLength(buf: Buffer): number | undefined {
  if (buf.length < 16) return undefined;
  const little = buf[0] === 0x6c;
  if (!little && buf[0] !== 0x42) throw new Error('bad D-Bus endianness marker');
  const bodyLength = little ? buf.readUInt32LE(4) : buf.readUInt32BE(4);
  const fieldsLength = little ? buf.readUInt32LE(12) : buf.readUInt32BE(12);
  const total = 16 + fieldsLength + ((8 - (fieldsLength % 8)) % 8) + bodyLength;
  if (total > MAX_MESSAGE) throw new Error(`D-Bus message of ${total} bytes is too large`);
  return total;
}

export function decodeMessage(buf: Buffer): DbusMessage {
  const r = new Reader(buf, buf[0] === 0x6c);
  const type = buf.readUInt8(1);
  const flags = buf.readUInt8(2);
  r.pos = 8;
  const serial = r.u32();
  const header: Record<string, DbusValue> = {};
  for (const field of r.value('a(yv)') as DbusValue[][]) {
    const spec = FIELDS.find(([code]) => code === field[0]);
    if (spec) header[spec[1]] = (field[1] as Variant).value;
  }
  r.align(8);
  const signature = header.signature as string | undefined;
  const body = splitSignature(signature ?? '').map((t) => r.value(t));
  return { ...(header as Partial<DbusMessage>), type, flags, serial, body };
}
