/**
 * The kernel's own count of /dev/kmsg records: every record has a sequence number, so the difference
 * between two readings is how many records were logged in between, by anyone. This is the ground truth
 * the agent's npd_log_lines_read_total + npd_kmsg_records_lost_total are compared with.
 */
import { closeSync, constants, openSync, readSync } from 'node:fs';

/** Reads /dev/kmsg to its end (non-blocking) and returns the newest record's sequence number. */
export function lastKmsgSeq(): number {
  const fd = openSync('/dev/kmsg', constants.O_RDONLY | constants.O_NONBLOCK);
  const buffer = Buffer.alloc(64 * 1024);
  let last = -1;
  try {
    for (;;) {
      let n: number;
      try {
        n = readSync(fd, buffer, 0, buffer.length, null);
      } catch (err) {
        const code = (err as NodeJS.ErrnoException).code;
        // EPIPE: records overwritten while we read; the next read resumes at the oldest one left.
        if (code === 'EPIPE') continue;
        if (code === 'EAGAIN') break;
        throw err;
      }
      if (n === 0) break;
      const m = /^\d+,(\d+),/.exec(buffer.toString('latin1', 0, Math.min(n, 64)));
      if (m) last = Number(m[1]);
    }
  } finally {
    closeSync(fd);
  }
  return last;
}
