import type { LogLine } from '../types.ts';
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
  private readonly lines: LogLine[] = [];
  private joined: string | undefined;
  private readonly size: number;

  constructor(size: number) {
    if (size < 1) throw new RangeError('bufferSize must be at least 1');
    this.size = size;
  }

  push(line: LogLine): void {
    this.lines.push(line);
    if (this.lines.length > this.size) this.lines.shift();
    this.joined = undefined;
  }

  newest(): LogLine | undefined {
    return this.lines[this.lines.length - 1];
  }

  match(pattern: CompiledPattern): BufferMatch | undefined {
    const last = this.newest();
    if (!last) return undefined;
    if (pattern.lastLineOnly) {
      const match = pattern.exec(last.message);
      return match ? { lines: [last], match } : undefined;
    }
    this.joined ??= this.lines.map((l) => l.message).join('\n');
    const match = pattern.exec(this.joined);
    return match ? { lines: this.linesFrom(match.start), match } : undefined;
  }

  /** The lines from the one holding `start` to the newest; as in NPD, a line owns the "\n" before it. */
  private linesFrom(start: number): LogLine[] {
    let offset = 0;
    for (let i = 0; i < this.lines.length; i++) {
      const lineEnd = offset + (this.lines[i] as LogLine).message.length;
      if (lineEnd > start) return this.lines.slice(i);
      offset = lineEnd + 1;
    }
    return this.lines.slice(-1);
  }
}
