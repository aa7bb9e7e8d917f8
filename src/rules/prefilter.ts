import { MultiLiteral } from './multi-literal.ts';
import type { CompiledPattern } from './pattern.ts';

/**
 * One pass over a line decides which single-line rules can possibly match it, by looking for the
 * rules' required literals (a multi-literal search, linear or better in the line). Most lines leave
 * here with no regex evaluated at all.
 */
export class Prefilter {
  private readonly gated: readonly (string | undefined)[];
  private readonly any: ((line: string) => boolean) | undefined;
  private readonly all: readonly boolean[];
  /** The answer for a line no gated literal occurs in; ungated patterns stay candidates. */
  readonly none: readonly boolean[];

  constructor(patterns: readonly CompiledPattern[]) {
    this.gated = patterns.map((p) =>
      p.lastLineOnly && p.literal && !p.literal.ignoreCase ? p.literal.text : undefined,
    );
    const literals = [...new Set(this.gated.filter((l): l is string => l !== undefined))];
    this.any = anyOf(literals);
    this.all = patterns.map(() => true);
    this.none = this.gated.map((l) => l === undefined);
  }

  /** Per pattern: false when the pattern certainly cannot match this line as the newest line. */
  candidates(line: string): readonly boolean[] {
    if (!this.any) return this.all;
    return this.any(line) ? this.all : this.none;
  }
}

/** One literal is found fastest by String#includes (Boyer-Moore-Horspool in V8), several by Wu-Manber. */
function anyOf(literals: readonly string[]): ((line: string) => boolean) | undefined {
  if (literals.length === 0) return undefined;
  if (literals.length === 1) {
    const only = literals[0] as string;
    return (line) => line.includes(only);
  }
  const set = new MultiLiteral(literals);
  return (line) => set.test(line);
}
