import * as nodeFs from 'node:fs';
import { type Libc, libcLoader } from './libc.ts';

/**
 * Calls `onReady` once `fd` is readable (or in error) and returns a function that cancels the wait
 * (after which `onReady` is never called); returns undefined when it cannot wait.
 */
export type WaitReadable = (fd: number, onReady: () => void) => (() => void) | undefined;

type PollFn = { async(fds: Buffer, nfds: number, timeout: number, cb: (err: unknown) => void): void };
type Pipe2Fn = (fds: Buffer, flags: number) => number;

const POLLIN = 0x1;
const O_CLOEXEC = 0o2000000;

/**
 * poll(2) on /dev/kmsg through koffi, so an idle reader sleeps until the kernel logs a record instead
 * of waking on a timer, and a flood's first records are read at once instead of up to one idle poll
 * later (the ring holds ~25 ms of a 40k lines/s flood). koffi runs the blocking call on a libuv pool
 * thread; a pipe polled beside the device lets cancel() end the wait at once. libc (libc.ts) is loaded
 * on the first wait; without it (or without a free fd for the pipe) a wait returns undefined and the
 * reader polls on a timer.
 */
export function koffiWaitReadable(libc: () => Libc | Error = libcLoader()): WaitReadable {
  let calls: { poll: PollFn; pipe2: Pipe2Fn } | null | undefined;
  // koffi passes poll(2) only the buffer's address; holding the buffer here until poll returns keeps
  // the garbage collector from freeing memory the kernel writes revents into.
  const inFlight = new Set<Buffer>();
  const load = () => {
    try {
      const lib = libc();
      if (lib instanceof Error) return null;
      return {
        poll: lib.func('int poll(void *fds, unsigned long nfds, int timeout)') as unknown as PollFn,
        pipe2: lib.func('int pipe2(void *fds, int flags)') as unknown as Pipe2Fn,
      };
    } catch {
      return null;
    }
  };
  return (fd, onReady) => {
    if (calls === undefined) calls = load();
    if (!calls) return undefined;
    const pipe = Buffer.alloc(8);
    if (calls.pipe2(pipe, nodeFs.constants.O_NONBLOCK | O_CLOEXEC) !== 0) return undefined;
    const [wakeRead, wakeWrite] = [pipe.readInt32LE(0), pipe.readInt32LE(4)];
    const fds = Buffer.alloc(16);
    fds.writeInt32LE(fd, 0);
    fds.writeInt16LE(POLLIN, 4);
    fds.writeInt32LE(wakeRead, 8);
    fds.writeInt16LE(POLLIN, 12);
    let state: 'waiting' | 'cancelled' | 'done' = 'waiting';
    inFlight.add(fds);
    // Whatever poll returned (ready, error, EINTR), the reader's next drain finds out.
    calls.poll.async(fds, 2, -1, () => {
      inFlight.delete(fds);
      const cancelled = state === 'cancelled';
      state = 'done';
      nodeFs.closeSync(wakeRead);
      nodeFs.closeSync(wakeWrite);
      if (!cancelled) onReady();
    });
    return () => {
      if (state !== 'waiting') return;
      state = 'cancelled';
      nodeFs.writeSync(wakeWrite, Buffer.from([1]));
    };
  };
}
