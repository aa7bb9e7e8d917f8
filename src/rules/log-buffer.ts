import type { LogLine } from '../core/types.ts';
import type { LineBytes } from './line-bytes.ts';
import type { CompiledPattern, PatternMatch } from './pattern.ts';

export interface BufferMatch {
  /** The buffered lines the match overlaps, oldest first. */
  readonly lines: readonly LogLine[];
  readonly match: PatternMatch;
}

/**
 * NPD's log buffer: the last `size` lines, joined with "\n" for patterns that may span lines. The join
 * is built lazily once per push, and single-line patterns never pay for it.
 */
export class LogBuffer {
  /** A ring: pushing never moves the other lines. */
  private readonly ring: (LogLine | undefined)[];
  private next = 0;
  private count = 0;
  private joined: string | undefined;
  private ordered: LogLine[] | undefined;

  constructor(size: number) {
    if (size < 1) throw new RangeError('bufferSize must be at least 1');
    this.ring = new Array<LogLine | undefined>(size).fill(undefined);
  }

  push(line: LogLine): void {
    this.ring[this.next] = line;
    this.next = this.next + 1 === this.ring.length ? 0 : this.next + 1;
    if (this.count < this.ring.length) this.count++;
    this.joined = undefined;
    this.ordered = undefined;
  }

  newest(): LogLine | undefined {
    return this.ring[this.next === 0 ? this.ring.length - 1 : this.next - 1];
  }

  /** The lines a match overlaps, oldest first, without extracting its groups. */
  matchedLines(pattern: CompiledPattern, bytes?: LineBytes): readonly LogLine[] | undefined {
    const last = this.newest();
    if (!last || !pattern.lastLineOnly) return this.match(pattern)?.lines;
    return pattern.test(last.message, bytes) ? [last] : undefined;
  }

  match(pattern: CompiledPattern): BufferMatch | undefined {
    const last = this.newest();
    if (!last) return undefined;
    if (pattern.lastLineOnly) {
      const match = pattern.exec(last.message);
      return match ? { lines: [last], match } : undefined;
    }
    const lines = this.lines();
    this.joined ??= lines.map((l) => l.message).join('\n');
    const match = pattern.exec(this.joined);
    return match ? { lines: linesFrom(lines, match.start), match } : undefined;
  }

  /** Oldest first. */
  private lines(): LogLine[] {
    if (this.ordered) return this.ordered;
    const size = this.ring.length;
    const out: LogLine[] = [];
    for (let i = 0; i < this.count; i++)
      out.push(this.ring[(this.next - this.count + i + size) % size] as LogLine);
    this.ordered = out;
    return out;
  }
}

/** The lines from the one holding `start` to the newest; as in NPD, a line owns the "\n" before it. */
function linesFrom(lines: readonly LogLine[], start: number): LogLine[] {
  let offset = 0;
  for (let i = 0; i < lines.length; i++) {
    const lineEnd = offset + (lines[i] as LogLine).message.length;
    if (lineEnd > start) return lines.slice(i);
    offset = lineEnd + 1;
  }
  return lines.slice(-1);
}
