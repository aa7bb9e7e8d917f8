/** NPD keeps at most this much of each of a plugin's stdout and stderr; the rest is read and dropped. */
export const PIPE_CAPTURE_BYTES = 4096;

/**
 * Keeps the first `cap` bytes written to it and only counts the rest, so a plugin that prints a
 * gigabyte costs one small buffer. Reading on regardless keeps the plugin from blocking on a full pipe.
 */
export class CappedCapture {
  private readonly cap: number;
  private readonly chunks: Buffer[] = [];
  private kept = 0;
  private dropped = 0;

  constructor(cap = PIPE_CAPTURE_BYTES) {
    this.cap = cap;
  }

  write(chunk: Buffer): void {
    const room = this.cap - this.kept;
    if (room > 0) {
      const part = chunk.length <= room ? chunk : chunk.subarray(0, room);
      // A copy, so the stream's (possibly pooled) chunk is not kept alive.
      this.chunks.push(Buffer.from(part));
      this.kept += part.length;
    }
    this.dropped += Math.max(0, chunk.length - Math.max(0, room));
  }

  /** True when bytes were dropped. */
  get overflowed(): boolean {
    return this.dropped > 0;
  }

  bytes(): Buffer {
    return Buffer.concat(this.chunks, this.kept);
  }

  /** The kept bytes as text; a character the cap cut in half is dropped rather than garbled. */
  text(): string {
    const bytes = this.bytes();
    return (this.overflowed ? dropPartialTail(bytes) : bytes).toString('utf8');
  }
}

/** `bytes` without a trailing UTF-8 sequence that was cut short. */
export function dropPartialTail(bytes: Buffer): Buffer {
  let lead = bytes.length - 1;
  while (lead > 0 && lead > bytes.length - 4 && ((bytes[lead] ?? 0) & 0xc0) === 0x80) lead--;
  const b = bytes[lead];
  if (b === undefined) return bytes;
  const need = b >= 0xf0 ? 4 : b >= 0xe0 ? 3 : b >= 0xc0 ? 2 : 1;
  return lead + need > bytes.length ? bytes.subarray(0, lead) : bytes;
}

const GO_SIGNAL_NAMES: Readonly<Record<string, string>> = {
  SIGABRT: 'aborted',
  SIGALRM: 'alarm clock',
  SIGBUS: 'bus error',
  SIGFPE: 'floating point exception',
  SIGHUP: 'hangup',
  SIGILL: 'illegal instruction',
  SIGINT: 'interrupt',
  SIGKILL: 'killed',
  SIGPIPE: 'broken pipe',
  SIGQUIT: 'quit',
  SIGSEGV: 'segmentation fault',
  SIGTERM: 'terminated',
  SIGUSR1: 'user defined signal 1',
  SIGUSR2: 'user defined signal 2',
};

/** Go's os.ProcessState.String(), which NPD puts in its timeout message; `<nil>` if it never exited. */
export function processState(exit: { code: number | null; signal: string | null } | undefined): string {
  if (!exit) return '<nil>';
  if (exit.signal) return `signal: ${GO_SIGNAL_NAMES[exit.signal] ?? exit.signal}`;
  return `exit status ${exit.code ?? -1}`;
}
