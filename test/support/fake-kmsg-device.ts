import type { KmsgDevice } from '../../src/host/clib/kmsg-snapshot.ts';

export function errno(code: string): NodeJS.ErrnoException {
  return Object.assign(new Error(`${code}: fake kmsg device`), { code });
}

export interface WriteOptions {
  readonly prio?: number;
  readonly usec?: number;
  readonly dict?: Readonly<Record<string, string>>;
}

interface Slot {
  readonly seq: number;
  readonly raw: string;
}

/**
 * A model of the kernel ring behind /dev/kmsg: each open starts at the oldest record, each read returns
 * one record, EAGAIN when drained, EPIPE when the reader's next record was overwritten (then it moves to
 * the oldest), and EINVAL (after stepping past the record) when the buffer is too small.
 */
export class FakeKmsgDevice implements KmsgDevice {
  /** Error codes thrown by the next opens, one per open. */
  readonly openErrors: string[] = [];
  /** Error codes thrown by the next reads, one per read, before any record is served. */
  readonly readErrors: string[] = [];
  readonly opened: Array<{ path: string; flags: number }> = [];
  readonly closed: number[] = [];
  readCalls = 0;
  private ring: Slot[] = [];
  private nextSeq = 0;
  private nextFd = 10;
  private readonly positions = new Map<number, number>();

  constructor(firstSeq = 0) {
    this.nextSeq = firstSeq;
  }

  /** Appends a record like printk would and returns its seq. */
  write(text: string, opts: WriteOptions = {}): number {
    const seq = this.nextSeq;
    const dict = Object.entries(opts.dict ?? {}).map(([k, v]) => ` ${k}=${v}\n`);
    this.writeRaw(`${opts.prio ?? 6},${seq},${opts.usec ?? seq * 1000},-;${text}\n${dict.join('')}`);
    return seq;
  }

  /** Appends an arbitrary payload (for malformed records); it occupies one seq slot. */
  writeRaw(raw: string): number {
    const seq = this.nextSeq++;
    this.ring.push({ seq, raw });
    return seq;
  }

  /** Drops the oldest records, as the kernel does when the ring wraps. */
  overwrite(count: number): void {
    this.ring = this.ring.slice(count);
  }

  openFds(): number {
    return this.positions.size;
  }

  openSync(path: string, flags: number): number {
    this.opened.push({ path, flags });
    const code = this.openErrors.shift();
    if (code) throw errno(code);
    const fd = this.nextFd++;
    this.positions.set(fd, this.ring[0]?.seq ?? this.nextSeq);
    return fd;
  }

  readSync(fd: number, buffer: Buffer): number {
    this.readCalls += 1;
    const pos = this.positions.get(fd);
    if (pos === undefined) throw errno('EBADF');
    const code = this.readErrors.shift();
    if (code) throw errno(code);
    const oldest = this.ring[0]?.seq ?? this.nextSeq;
    if (pos < oldest) {
      this.positions.set(fd, oldest);
      throw errno('EPIPE');
    }
    const slot = this.ring[pos - oldest];
    if (!slot) throw errno('EAGAIN');
    this.positions.set(fd, pos + 1);
    const bytes = Buffer.from(slot.raw, 'utf8');
    if (bytes.length > buffer.length) throw errno('EINVAL');
    return bytes.copy(buffer);
  }

  closeSync(fd: number): void {
    if (!this.positions.delete(fd)) throw errno('EBADF');
    this.closed.push(fd);
  }
}
