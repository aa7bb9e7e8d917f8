import type { LogLine } from '../core/types.ts';
import type { LineBytes } from './line-bytes.ts';
import type { CompiledPattern, PatternMatch } from './pattern.ts';
import { type QuotedClassifier, QuotedText } from './untrusted.ts';

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
  /** The join with every quoted span masked (untrusted.ts), built only when a rule matched. */
  private joinedTrusted: string | undefined;
  private ordered: LogLine[] | undefined;
  private readonly quoted: QuotedText;

  /** `classify`: the source's quoted-span classifier, for lines that carry no `quoted` of their own. */
  constructor(size: number, classify?: QuotedClassifier) {
    if (size < 1) throw new RangeError('bufferSize must be at least 1');
    this.ring = new Array<LogLine | undefined>(size).fill(undefined);
    this.quoted = new QuotedText(classify);
  }

  push(line: LogLine): void {
    this.ring[this.next] = line;
    this.next = this.next + 1 === this.ring.length ? 0 : this.next + 1;
    if (this.count < this.ring.length) this.count++;
    this.joined = undefined;
    this.joinedTrusted = undefined;
    this.ordered = undefined;
  }

  /** Whether the text the pattern is matched against holds a quoted span (so the trusted view may differ). */
  quotedIn(pattern: CompiledPattern): boolean {
    if (!pattern.lastLineOnly) return this.lines().some((l) => this.quoted.has(l));
    const last = this.newest();
    return last !== undefined && this.quoted.has(last);
  }

  newest(): LogLine | undefined {
    return this.ring[this.next === 0 ? this.ring.length - 1 : this.next - 1];
  }

  /**
   * The lines a match overlaps, oldest first, without extracting its groups. `trusted`: match the
   * text with quoted spans masked (same length, so the lines found are the same).
   */
  matchedLines(pattern: CompiledPattern, bytes?: LineBytes, trusted = false): readonly LogLine[] | undefined {
    const last = this.newest();
    if (!last || !pattern.lastLineOnly) return this.match(pattern, trusted)?.lines;
    if (trusted) return pattern.test(this.quoted.trusted(last)) ? [last] : undefined;
    return pattern.test(last.message, bytes) ? [last] : undefined;
  }

  match(pattern: CompiledPattern, trusted = false): BufferMatch | undefined {
    const last = this.newest();
    if (!last) return undefined;
    if (pattern.lastLineOnly) {
      const match = pattern.exec(trusted ? this.quoted.trusted(last) : last.message);
      return match ? { lines: [last], match } : undefined;
    }
    const lines = this.lines();
    const match = pattern.exec(trusted ? this.trustedJoin(lines) : this.join(lines));
    return match ? { lines: linesFrom(lines, match.start), match } : undefined;
  }

  /** A match of the text as read that the masked text has too: its lines, and its groups if asked. */
  trustedMatch(
    pattern: CompiledPattern,
    groups: boolean,
  ): { lines: readonly LogLine[]; found?: BufferMatch } | undefined {
    if (groups) {
      const found = this.match(pattern, true);
      return found && { lines: found.lines, found };
    }
    const lines = this.matchedLines(pattern, undefined, true);
    return lines && { lines };
  }

  /** Whether the pattern matches both the text as read and, where it holds quoted spans, the masked text. */
  matchedTrusted(pattern: CompiledPattern, bytes: LineBytes): boolean {
    if (!this.matchedLines(pattern, bytes)) return false;
    return !this.quotedIn(pattern) || this.matchedLines(pattern, undefined, true) !== undefined;
  }

  private join(lines: readonly LogLine[]): string {
    this.joined ??= lines.map((l) => l.message).join('\n');
    return this.joined;
  }

  private trustedJoin(lines: readonly LogLine[]): string {
    this.joinedTrusted ??= lines.map((l) => this.quoted.trusted(l)).join('\n');
    return this.joinedTrusted;
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
