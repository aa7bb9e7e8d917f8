import type { CompiledPattern } from './pattern.ts';
import { SharedScan } from './shared-scan.ts';

/**
 * One pass over a line decides which single-line rules can possibly match it, by looking for the
 * rules' required literals (a multi-literal search, linear or better in the line). Most lines leave
 * here with no regex evaluated at all, and a line that holds a literal evaluates only the rules that
 * require it. The pass is either its own or one shared with other rule sets on the same source.
 */
export class Prefilter {
  /** The gated literals, each once; a shared scan must look for all of them. */
  readonly literals: readonly string[];
  /** Per pattern: the indexes into `literals` of its literals (any one will do); none when not gated. */
  private readonly literalsOf: readonly (readonly number[])[];
  private readonly own: SharedScan | undefined;
  private readonly some: boolean[];
  private readonly all: readonly boolean[];
  /** Where each of `literals` sits in the last shared scan seen. */
  private mapping: { scan: SharedScan; index: readonly number[] } | undefined;
  /** The answer for a line no gated literal occurs in; ungated patterns stay candidates. */
  readonly none: readonly boolean[];

  constructor(patterns: readonly CompiledPattern[]) {
    const gated = patterns.map((p) =>
      p.lastLineOnly && p.literal && !p.literal.ignoreCase ? p.literal.texts : undefined,
    );
    this.literals = [...new Set(gated.flatMap((l) => l ?? []))];
    this.literalsOf = gated.map((l) => (l ?? []).map((t) => this.literals.indexOf(t)));
    this.own = this.literals.length > 0 ? new SharedScan(this.literals) : undefined;
    this.all = patterns.map(() => true);
    this.none = gated.map((l) => l === undefined);
    this.some = [...this.none];
  }

  /**
   * Per pattern: false when the pattern certainly cannot match this line as the newest line. The
   * array is reused: read it before the next call.
   */
  candidates(line: string): readonly boolean[] {
    if (!this.own) return this.all;
    return this.pick(this.own.find(line), undefined);
  }

  /** The same answer from a scan that already ran over the line, for a scan that includes `literals`. */
  candidatesScanned(found: Uint8Array | undefined, scan: SharedScan): readonly boolean[] {
    if (!this.own) return this.all;
    if (!found) return this.none;
    return this.pick(found, this.indexIn(scan));
  }

  private pick(found: Uint8Array | undefined, index: readonly number[] | undefined): readonly boolean[] {
    if (!found) return this.none;
    for (let i = 0; i < this.literalsOf.length; i++) {
      const own = this.literalsOf[i] as readonly number[];
      this.some[i] = own.length === 0 || own.some((k) => found[index ? (index[k] as number) : k] === 1);
    }
    return this.some;
  }

  private indexIn(scan: SharedScan): readonly number[] {
    if (this.mapping?.scan !== scan) {
      const index = this.literals.map((t) => scan.texts.indexOf(t));
      if (index.includes(-1)) throw new Error('the shared scan misses literals of this rule set');
      this.mapping = { scan, index };
    }
    return this.mapping.index;
  }
}
