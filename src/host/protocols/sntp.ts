import type * as Dgram from 'node:dgram';
import { isIPv6 } from 'node:net';
import { builtin } from '../../core/builtin.ts';
import type { Clock } from '../../core/clock.ts';

/** Seconds from the NTP era (1900) to the Unix epoch. */
const NTP_EPOCH_OFFSET_S = 2_208_988_800;
const PACKET = 48;

export interface SntpAnswer {
  /** How far the local clock is behind (+) or ahead (−) of the server, in milliseconds. */
  readonly offsetMs: number;
  readonly roundTripMs: number;
  readonly stratum: number;
}

export function writeNtpTime(buf: Buffer, at: number, ms: number): void {
  const seconds = Math.floor(ms / 1000);
  buf.writeUInt32BE((seconds + NTP_EPOCH_OFFSET_S) >>> 0, at);
  buf.writeUInt32BE(Math.floor(((ms - seconds * 1000) / 1000) * 2 ** 32) >>> 0, at + 4);
}

export function readNtpTime(buf: Buffer, at: number): number {
  const seconds = buf.readUInt32BE(at) - NTP_EPOCH_OFFSET_S;
  return seconds * 1000 + (buf.readUInt32BE(at + 4) / 2 ** 32) * 1000;
}

/** Client request: LI 0, version 4, mode 3 (client), our transmit time. */
export function sntpRequest(nowMs: number): Buffer {
  const buf = Buffer.alloc(PACKET);
  buf[0] = (4 << 3) | 3;
  writeNtpTime(buf, 40, nowMs);
  return buf;
}

/** Checks and reads a server reply (RFC 4330 §5): it must echo our transmit time as its origin. */
export function parseSntpReply(reply: Buffer, request: Buffer, receivedMs: number): SntpAnswer {
  if (reply.length < PACKET) throw new Error(`short SNTP reply (${reply.length} bytes)`);
  const mode = (reply[0] as number) & 7;
  const leap = (reply[0] as number) >> 6;
  const stratum = reply[1] as number;
  if (mode !== 4) throw new Error(`SNTP reply has mode ${mode}, not 4 (server)`);
  if (!reply.subarray(24, 32).equals(request.subarray(40, 48)))
    throw new Error('SNTP reply does not match the request');
  if (stratum === 0) throw new Error(`SNTP server sent kiss-o'-death ${reply.toString('latin1', 12, 16)}`);
  if (leap === 3) throw new Error('SNTP server is not synchronised (leap indicator 3)');
  const t1 = readNtpTime(request, 40);
  const t2 = readNtpTime(reply, 32);
  const t3 = readNtpTime(reply, 40);
  return { offsetMs: (t2 - t1 + (t3 - receivedMs)) / 2, roundTripMs: receivedMs - t1 - (t3 - t2), stratum };
}

/** One SNTP exchange; `signal` bounds it (a lost UDP packet is otherwise never answered). */
export function querySntp(
  host: string,
  port: number,
  clock: Clock,
  signal: AbortSignal,
): Promise<SntpAnswer> {
  return new Promise((resolve, reject) => {
    signal.throwIfAborted();
    const socket = builtin<typeof Dgram>('node:dgram').createSocket(isIPv6(host) ? 'udp6' : 'udp4');
    const request = sntpRequest(clock.now());
    let done = false;
    const finish = (err: Error | undefined, answer?: SntpAnswer) => {
      if (done) return;
      done = true;
      signal.removeEventListener('abort', onAbort);
      socket.close();
      if (err) reject(err);
      else resolve(answer as SntpAnswer);
    };
    const onAbort = () => finish(signal.reason instanceof Error ? signal.reason : new Error('aborted'));
    signal.addEventListener('abort', onAbort, { once: true });
    socket.on('error', (err) => finish(err));
    socket.on('message', (msg) => {
      try {
        finish(undefined, parseSntpReply(msg, request, clock.now()));
      } catch (err) {
        finish(err as Error);
      }
    });
    socket.send(request, port, host, (err) => {
      if (err) finish(err);
    });
  });
}
