import { connect, type Socket } from 'node:net';
import type { DbusValue, Variant } from './codec.ts';
import { type DbusMessage, decodeMessage, encodeMessage, MessageType, messageLength } from './wire.ts';

/** An error reply, e.g. org.freedesktop.DBus.Error.UnknownProperty. */
export class DbusError extends Error {
  readonly dbusName: string;

  constructor(dbusName: string, message: string) {
    super(`${dbusName}: ${message}`);
    this.name = 'DbusError';
    this.dbusName = dbusName;
  }
}

export interface DbusCall {
  readonly destination?: string;
  readonly path: string;
  readonly interface: string;
  readonly member: string;
  readonly signature?: string;
  readonly body?: readonly DbusValue[];
}

interface Pending {
  resolve(m: DbusMessage): void;
  reject(err: Error): void;
}

const MAX_AUTH_LINE = 1024;

/**
 * A minimal D-Bus client over a unix socket: EXTERNAL authentication, Hello, and method calls with
 * their replies. One connection per probe run keeps it stateless; the caller's signal ends it.
 */
export class DbusConnection {
  private readonly socket: Socket;
  private readonly pending = new Map<number, Pending>();
  private serial = 0;
  private buffer: Buffer = Buffer.alloc(0);
  private failure: Error | undefined;

  private constructor(socket: Socket) {
    this.socket = socket;
  }

  /** Connects, authenticates as `uid` and says Hello (a peer-to-peer socket such as systemd's private one ignores it). */
  static async open(socketPath: string, uid: number, signal: AbortSignal): Promise<DbusConnection> {
    signal.throwIfAborted();
    const socket = connect(socketPath);
    const conn = new DbusConnection(socket);
    const onAbort = () => conn.fail(signal.reason instanceof Error ? signal.reason : new Error('aborted'));
    signal.addEventListener('abort', onAbort, { once: true });
    socket.once('close', () => signal.removeEventListener('abort', onAbort));
    try {
      await conn.authenticate(uid);
      await conn
        .call({
          destination: 'org.freedesktop.DBus',
          path: '/org/freedesktop/DBus',
          interface: 'org.freedesktop.DBus',
          member: 'Hello',
        })
        .catch((err: unknown) => {
          if (!(err instanceof DbusError)) throw err;
        });
    } catch (err) {
      conn.close();
      throw err;
    }
    return conn;
  }

  call(c: DbusCall): Promise<DbusMessage> {
    if (this.failure) return Promise.reject(this.failure);
    const serial = ++this.serial;
    const message: DbusMessage = { type: MessageType.MethodCall, flags: 0, serial, ...c, body: c.body ?? [] };
    return new Promise((resolve, reject) => {
      this.pending.set(serial, { resolve, reject });
      this.socket.write(encodeMessage(message));
    });
  }

  /** org.freedesktop.DBus.Properties.Get, unwrapped from its variant. */
  async getProperty(destination: string, path: string, iface: string, name: string): Promise<DbusValue> {
    const reply = await this.call({
      destination,
      path,
      interface: 'org.freedesktop.DBus.Properties',
      member: 'Get',
      signature: 'ss',
      body: [iface, name],
    });
    return (reply.body[0] as Variant).value;
  }

  close(): void {
    this.fail(new Error('connection closed'));
  }

  private fail(err: Error): void {
    this.failure ??= err;
    for (const p of this.pending.values()) p.reject(this.failure);
    this.pending.clear();
    this.socket.destroy();
  }

  private authenticate(uid: number): Promise<void> {
    const hexUid = Buffer.from(String(uid), 'ascii').toString('hex');
    return new Promise((resolve, reject) => {
      let text = '';
      const onData = (chunk: Buffer) => {
        text += chunk.toString('latin1');
        const end = text.indexOf('\r\n');
        if (end < 0) {
          if (text.length > MAX_AUTH_LINE) done(new Error('D-Bus authentication: reply line too long'));
          return;
        }
        const line = text.slice(0, end);
        if (!line.startsWith('OK ')) return done(new Error(`D-Bus authentication rejected: ${line}`));
        this.socket.write('BEGIN\r\n');
        done(undefined, Buffer.from(text.slice(end + 2), 'latin1'));
      };
      const onError = (err: Error) => done(err);
      const onClose = () => done(this.failure ?? new Error('D-Bus connection closed during authentication'));
      const done = (err?: Error, rest?: Buffer) => {
        this.socket.off('data', onData).off('error', onError).off('close', onClose);
        if (err) return reject(err);
        this.listen(rest ?? Buffer.alloc(0));
        resolve();
      };
      this.socket.on('data', onData).on('error', onError).on('close', onClose);
      this.socket.write(`\0AUTH EXTERNAL ${hexUid}\r\n`);
    });
  }

  private listen(initial: Buffer): void {
    this.socket.on('data', (chunk: Buffer) => this.receive(chunk));
    this.socket.on('error', (err) => this.fail(err));
    this.socket.on('close', () => this.fail(new Error('D-Bus connection closed')));
    if (initial.length > 0) this.receive(initial);
  }

  private receive(chunk: Buffer): void {
    this.buffer = this.buffer.length === 0 ? chunk : Buffer.concat([this.buffer, chunk]);
    try {
      for (;;) {
        const length = messageLength(this.buffer);
        if (length === undefined || this.buffer.length < length) return;
        const message = decodeMessage(this.buffer.subarray(0, length));
        this.buffer = this.buffer.subarray(length);
        this.dispatch(message);
      }
    } catch (err) {
      this.fail(err as Error);
    }
  }

  /** Signals (NameAcquired) and anything that answers no pending call are dropped. */
  private dispatch(m: DbusMessage): void {
    if (m.replySerial === undefined) return;
    const p = this.pending.get(m.replySerial);
    if (!p) return;
    this.pending.delete(m.replySerial);
    if (m.type === MessageType.Error)
      p.reject(new DbusError(m.errorName ?? 'unknown', String(m.body[0] ?? '')));
    else p.resolve(m);
  }
}
