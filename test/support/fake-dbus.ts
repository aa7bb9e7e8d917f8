import { createServer, type Server, type Socket } from 'node:net';
import { join } from 'node:path';
import type { DbusValue } from '../../src/host/protocols/dbus/codec.ts';
import {
  type DbusMessage,
  decodeMessage,
  encodeMessage,
  MessageType,
  messageLength,
} from '../../src/host/protocols/dbus/wire.ts';

/** Properties of one object path, by interface then name, with their D-Bus type. */
export type FakeObject = Record<string, Record<string, { signature: string; value: DbusValue }>>;

export interface FakeUnit {
  LoadState?: string;
  ActiveState: string;
  SubState: string;
  InactiveExitTimestamp?: bigint;
  NRestarts?: number;
}

/**
 * A tiny D-Bus peer speaking the real wire protocol: EXTERNAL auth, Hello (answered after a
 * NameAcquired signal, as dbus-daemon does), and org.freedesktop.DBus.Properties.Get.
 */
export class FakeDbus {
  readonly path: string;
  readonly objects = new Map<string, FakeObject>();
  readonly calls: DbusMessage[] = [];
  readonly authLines: string[] = [];
  rejectAuth = false;
  /** Never answer Get: a hung systemd. */
  hang = false;
  private readonly server: Server;
  private serial = 1000;

  private constructor(path: string) {
    this.path = path;
    this.server = createServer((socket) => this.serve(socket));
  }

  static async start(dir: string): Promise<FakeDbus> {
    const bus = new FakeDbus(join(dir, 'system_bus_socket'));
    await new Promise<void>((resolve) => bus.server.listen(bus.path, resolve));
    return bus;
  }

  setUnit(objectPath: string, u: FakeUnit): void {
    const unit: FakeObject = {
      'org.freedesktop.systemd1.Unit': {
        LoadState: { signature: 's', value: u.LoadState ?? 'loaded' },
        ActiveState: { signature: 's', value: u.ActiveState },
        SubState: { signature: 's', value: u.SubState },
        InactiveExitTimestamp: { signature: 't', value: u.InactiveExitTimestamp ?? 0n },
      },
    };
    if (u.NRestarts !== undefined) {
      unit['org.freedesktop.systemd1.Service'] = { NRestarts: { signature: 'u', value: u.NRestarts } };
    }
    this.objects.set(objectPath, unit);
  }

  close(): Promise<void> {
    return new Promise((resolve) => this.server.close(() => resolve()));
  }

  private serve(socket: Socket): void {
    let buf = Buffer.alloc(0);
    let authed = false;
    socket.on('error', () => undefined);
    socket.on('data', (chunk: Buffer) => {
      buf = Buffer.concat([buf, chunk]);
      if (!authed) {
        const end = buf.indexOf('BEGIN\r\n');
        const text = buf.toString('latin1');
        for (const line of text.split('\r\n').slice(0, -1)) this.auth(socket, line);
        if (end < 0) {
          buf = Buffer.from(text.slice(text.lastIndexOf('\r\n') + 2), 'latin1');
          return;
        }
        authed = true;
        buf = buf.subarray(end + 7);
      }
      for (let n = messageLength(buf); n !== undefined && buf.length >= n; n = messageLength(buf)) {
        this.handle(socket, decodeMessage(buf.subarray(0, n)));
        buf = buf.subarray(n);
      }
    });
  }

  private auth(socket: Socket, line: string): void {
    const clean = line.replace(/^\0/, '');
    if (!clean.startsWith('AUTH')) return;
    this.authLines.push(clean);
    socket.write(this.rejectAuth ? 'REJECTED EXTERNAL\r\n' : 'OK 0123456789abcdef0123456789abcdef\r\n');
  }

  private handle(socket: Socket, m: DbusMessage): void {
    this.calls.push(m);
    if (m.member === 'Hello') {
      socket.write(
        encodeMessage({
          type: MessageType.Signal,
          flags: 1,
          serial: ++this.serial,
          path: '/org/freedesktop/DBus',
          interface: 'org.freedesktop.DBus',
          member: 'NameAcquired',
          signature: 's',
          body: [':1.42'],
        }),
      );
      this.reply(socket, m, 's', [':1.42']);
      return;
    }
    if (m.member !== 'Get' || this.hang) return;
    const [iface, name] = m.body as string[];
    const prop = this.objects.get(m.path ?? '')?.[iface ?? '']?.[name ?? ''];
    if (prop) this.reply(socket, m, 'v', [prop]);
    else this.error(socket, m, 'org.freedesktop.DBus.Error.UnknownProperty', `no property ${name}`);
  }

  private reply(socket: Socket, to: DbusMessage, signature: string, body: DbusValue[]): void {
    socket.write(
      encodeMessage({
        type: MessageType.MethodReturn,
        flags: 1,
        serial: ++this.serial,
        replySerial: to.serial,
        signature,
        body,
      }),
    );
  }

  private error(socket: Socket, to: DbusMessage, name: string, text: string): void {
    socket.write(
      encodeMessage({
        type: MessageType.Error,
        flags: 1,
        serial: ++this.serial,
        replySerial: to.serial,
        errorName: name,
        signature: 's',
        body: [text],
      }),
    );
  }
}
