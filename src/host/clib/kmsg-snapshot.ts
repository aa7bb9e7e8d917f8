import * as nodeFs from 'node:fs';
import { koffiWaitReadable, type WaitReadable } from './kmsg-poll.ts';

/**
 * The syscalls a /dev/kmsg reader makes; the real device, or a fake in tests. libuv cannot watch a
 * character device and a blocking read cannot be interrupted at shutdown, so the device is opened
 * non-blocking, drained with synchronous reads, and waited on with a cancellable poll(2).
 */
export interface KmsgDevice {
  openSync(path: string, flags: number): number;
  /** Reads one record into buffer and returns its length; throws errno errors (EAGAIN, EPIPE, ...). */
  readSync(fd: number, buffer: Buffer): number;
  closeSync(fd: number): void;
  /** Without it the reader polls on a timer. */
  readonly waitReadable?: WaitReadable;
}

export function nodeKmsgDevice(): KmsgDevice {
  return {
    openSync: (path, flags) => nodeFs.openSync(path, flags),
    // The driver ignores positions; null keeps Node from tracking one.
    readSync: (fd, buffer) => nodeFs.readSync(fd, buffer, 0, buffer.length, null),
    closeSync: (fd) => nodeFs.closeSync(fd),
    waitReadable: koffiWaitReadable(),
  };
}

export interface KmsgSnapshot {
  /** The newest records that fit, oldest first, each as the kernel formats it ("prio,seq,usec,flags;text"). */
  readonly text: string;
  readonly truncated: boolean;
  /** Records the kernel overwrote while we read (EPIPE). */
  readonly lost: number;
}

/** Records plus dictionaries stay under 8 KiB (CONSOLE_EXT_LOG_MAX). */
const RECORD_BUFFER_BYTES = 16 * 1024;

function errnoCode(err: unknown): string | undefined {
  return (err as NodeJS.ErrnoException | undefined)?.code;
}

/**
 * Reads the kernel ring without consuming it: every open of /dev/kmsg gets its own position at the
 * oldest record, and reading never clears the ring (unlike `dmesg -c`, which uses syslog(2)). Keeps
 * only the newest records within `maxBytes`, and stops after `maxRecords` so a flood cannot pin it.
 */
export function snapshotKmsg(
  path: string,
  limits: { readonly maxBytes: number; readonly maxRecords: number },
  device: KmsgDevice = nodeKmsgDevice(),
): KmsgSnapshot {
  const fd = device.openSync(path, nodeFs.constants.O_RDONLY | nodeFs.constants.O_NONBLOCK);
  const kept: string[] = [];
  let size = 0;
  let truncated = false;
  let lost = 0;
  const buffer = Buffer.alloc(RECORD_BUFFER_BYTES);
  try {
    for (let n = 0; n < limits.maxRecords; n++) {
      let len: number;
      try {
        len = device.readSync(fd, buffer);
      } catch (err) {
        if (errnoCode(err) === 'EPIPE') {
          lost++;
          continue;
        }
        if (errnoCode(err) === 'EAGAIN') break;
        throw err;
      }
      const record = buffer.toString('utf8', 0, len).replace(/\n$/, '');
      kept.push(record);
      size += Buffer.byteLength(record) + 1;
      while (size > limits.maxBytes && kept.length > 0) {
        size -= Buffer.byteLength(kept.shift() as string) + 1;
        truncated = true;
      }
      if (n === limits.maxRecords - 1) truncated = true;
    }
  } finally {
    device.closeSync(fd);
  }
  return { text: kept.map((r) => `${r}\n`).join(''), truncated, lost };
}
