import type { CompiledPattern } from './pattern.ts';

/**
 * One pass over a line decides which single-line rules can possibly match it: a single V8 regex made
 * of nothing but the rules' required literals. An alternation of plain literals cannot backtrack
 * beyond the longest literal, so it runs in time linear in the line, and most lines leave here with
 * no regex evaluated at all.
 */
export class Prefilter {
  private readonly gated: readonly (string | undefined)[];
  private readonly any: RegExp | undefined;
  private readonly all: readonly boolean[];
  private readonly none: readonly boolean[];

  constructor(patterns: readonly CompiledPattern[]) {
    this.gated = patterns.map((p) =>
      p.lastLineOnly && p.literal && !p.literal.ignoreCase ? p.literal.text : undefined,
    );
    const literals = [...new Set(this.gated.filter((l): l is string => l !== undefined))];
    this.any = literals.length > 0 ? new RegExp(literals.map(escapeRegExp).join('|')) : undefined;
    this.all = patterns.map(() => true);
    this.none = this.gated.map((l) => l === undefined);
  }

  /** Per pattern: false when the pattern certainly cannot match this line as the newest line. */
  candidates(line: string): readonly boolean[] {
    if (!this.any) return this.all;
    return this.any.test(line) ? this.all : this.none;
  }
}

function escapeRegExp(text: string): string {
  return text.replace(/[\\^$.*+?()[\]{}|/-]/g, '\\$&');
}
