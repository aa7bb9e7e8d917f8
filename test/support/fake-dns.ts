import { createSocket, type Socket } from 'node:dgram';
import { isIPv4, isIPv6 } from 'node:net';

/**
 * A tiny authoritative DNS responder over UDP (RFC 1035 §4): answers A/AAAA for the names it is
 * given and NXDOMAIN for the rest. Enough for node:dns (c-ares) to resolve against it.
 */
export interface FakeDns {
  readonly port: number;
  /** Queries answered so far. */
  readonly queries: string[];
  close(): Promise<void>;
}

function readName(msg: Buffer, start: number): { name: string; end: number } | undefined {
  const labels: string[] = [];
  let i = start;
  while (i < msg.length) {
    const len = msg[i] ?? 0;
    if (len === 0) return { name: labels.join('.').toLowerCase(), end: i + 1 };
    if (len > 63) return undefined;
    labels.push(msg.subarray(i + 1, i + 1 + len).toString('latin1'));
    i += 1 + len;
  }
  return undefined;
}

function rdata(type: number, address: string): Buffer | undefined {
  if (type === 1 && isIPv4(address)) return Buffer.from(address.split('.').map(Number));
  if (type !== 28 || !isIPv6(address)) return undefined;
  const [head = '', tail = ''] = address.split('::');
  const h = head ? head.split(':') : [];
  const t = tail ? tail.split(':') : [];
  const groups = [...h, ...Array(8 - h.length - t.length).fill('0'), ...t];
  return Buffer.from(groups.flatMap((g) => [Number.parseInt(g, 16) >> 8, Number.parseInt(g, 16) & 0xff]));
}

export function answer(
  msg: Buffer,
  records: Readonly<Record<string, readonly string[]>>,
): Buffer | undefined {
  if (msg.length < 12) return undefined;
  const q = readName(msg, 12);
  if (!q || q.end + 4 > msg.length) return undefined;
  const type = msg.readUInt16BE(q.end);
  const question = msg.subarray(12, q.end + 4);
  const known = records[q.name.replace(/\.$/, '')];
  const answers = (known ?? []).map((a) => rdata(type, a)).filter((b): b is Buffer => b !== undefined);
  const header = Buffer.alloc(12);
  header.writeUInt16BE(msg.readUInt16BE(0), 0);
  header.writeUInt16BE(0x8580 | (known ? 0 : 3), 2); // QR AA RD RA; rcode NXDOMAIN when unknown
  header.writeUInt16BE(1, 4);
  header.writeUInt16BE(answers.length, 6);
  const rrs = answers.map((data) => {
    const rr = Buffer.alloc(12);
    rr.writeUInt16BE(0xc00c, 0);
    rr.writeUInt16BE(type, 2);
    rr.writeUInt16BE(1, 4);
    rr.writeUInt32BE(60, 6);
    rr.writeUInt16BE(data.length, 10);
    return Buffer.concat([rr, data]);
  });
  return Buffer.concat([header, question, ...rrs]);
}

export function serveDns(
  records: Readonly<Record<string, readonly string[]>>,
  address = '127.0.0.1',
  port = 0,
  onQuery: (name: string) => void = () => {},
): Promise<FakeDns> {
  const socket: Socket = createSocket(isIPv6(address) ? 'udp6' : 'udp4');
  const queries: string[] = [];
  socket.on('message', (msg, from) => {
    const reply = answer(msg, records);
    if (!reply) return;
    const name = readName(msg, 12)?.name ?? '';
    queries.push(name);
    onQuery(name);
    socket.send(reply, from.port, from.address);
  });
  return new Promise((resolve, reject) => {
    socket.once('error', reject);
    socket.bind(port, address, () => {
      resolve({
        port: socket.address().port,
        queries,
        close: () => new Promise((r) => socket.close(() => r())),
      });
    });
  });
}
