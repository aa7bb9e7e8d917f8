/** One complete line, decoded only once whole so a multi-byte character split across reads survives. */
export interface SplitLine {
  readonly text: string;
  /** The line was longer than the splitter's bound and only its head is kept. */
  readonly truncated: boolean;
}

const NEWLINE = 0x0a;
const CR = 0x0d;

/**
 * Splits a byte stream into lines with a bounded buffer: a line without a newline never holds more
 * than `maxLineBytes`, the rest of it is discarded up to the next newline (and the line flagged), so a
 * writer that never ends its line cannot exhaust memory.
 */
export class LineSplitter {
  private readonly maxLineBytes: number;
  private parts: Buffer[] = [];
  private size = 0;
  private overflow = false;

  constructor(maxLineBytes: number) {
    this.maxLineBytes = maxLineBytes;
  }

  /** Bytes held for the incomplete last line. */
  get pendingBytes(): number {
    return this.size;
  }

  /** Appends the complete lines found in `chunk` to `out`; a trailing "\r" is removed as well. */
  push(chunk: Buffer, out: SplitLine[]): void {
    let from = 0;
    for (;;) {
      const nl = chunk.indexOf(NEWLINE, from);
      if (nl < 0) break;
      this.hold(chunk.subarray(from, nl));
      out.push(this.take());
      from = nl + 1;
    }
    if (from < chunk.length) this.hold(chunk.subarray(from));
  }

  /** Returns the incomplete last line, if any, and forgets it. */
  flush(): SplitLine | undefined {
    if (this.size === 0 && !this.overflow) return undefined;
    return this.take();
  }

  private hold(bytes: Buffer): void {
    const room = this.maxLineBytes - this.size;
    if (bytes.length > room) this.overflow = true;
    const kept = bytes.length > room ? bytes.subarray(0, Math.max(0, room)) : bytes;
    if (kept.length === 0) return;
    // Copy: the caller may reuse its read buffer for the next chunk.
    this.parts.push(Buffer.from(kept));
    this.size += kept.length;
  }

  private take(): SplitLine {
    let bytes = this.parts.length === 1 ? (this.parts[0] as Buffer) : Buffer.concat(this.parts, this.size);
    if (bytes.length > 0 && bytes[bytes.length - 1] === CR) bytes = bytes.subarray(0, bytes.length - 1);
    const line = { text: bytes.toString('utf8'), truncated: this.overflow };
    this.parts = [];
    this.size = 0;
    this.overflow = false;
    return line;
  }
}
