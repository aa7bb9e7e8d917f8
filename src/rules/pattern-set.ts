import RE2 from 're2';
import type { LineBytes } from './line-bytes.ts';
import type { CompiledPattern } from './pattern.ts';

/**
 * Below this much work, testing each candidate regex is cheaper than one combined pass: (candidates
 * - 1) × line length in characters. A set pass costs about what two single tests do, so a short line
 * with few candidates stays on single tests, and a long line with two or more goes to the set
 * (test/bench, npm run bench -- rules).
 */
export const SET_MIN_WORK = 1024;

/**
 * One RE2::Set over the rule patterns that are matched against the newest line alone by a regex
 * (lastLineOnly, and no string search answers them). Each member is the exact expression the rule's
 * own test runs, `(?:p)\z`, so one pass over the line tells which rules match: on a 64 KiB line that
 * is one automaton scan instead of one per rule. A line that passes many rules' literal prefilters
 * then costs a single scan, however many rules it gets past.
 */
export class PatternSet {
  private readonly set: RE2Set | undefined;
  /** For each set member, the index of its pattern. */
  private readonly members: readonly number[];
  private readonly minWork: number;
  private readonly verdict: boolean[];
  /** Screens answered rule by rule because RE2 would not build the set or ran out of memory. */
  private fallbackCount = 0;

  /** `compile` is RE2's own; tests pass one that fails, as RE2 does on a program too large for it. */
  constructor(
    patterns: readonly CompiledPattern[],
    minWork = SET_MIN_WORK,
    compile: SetCompiler = compileSet,
  ) {
    const members = patterns.flatMap((p, i) => (p.lastLineOnly && p.regexTest ? [i] : []));
    this.members = members;
    this.minWork = minWork;
    this.verdict = patterns.map(() => true);
    this.set =
      members.length > 0 ? compile(members.map((i) => (patterns[i] as CompiledPattern).anchored)) : undefined;
  }

  /**
   * Narrows the prefilter's candidates to the set members that match `text` as the newest line (all
   * other candidates stay). Undefined when the set would not pay for itself here, or RE2 gave up on
   * it: then each candidate is tested on its own, with the same answer. The array is reused.
   */
  screen(text: string, bytes: LineBytes, candidates: readonly boolean[]): readonly boolean[] | undefined {
    if (this.members.length === 0) return undefined;
    let k = 0;
    for (const i of this.members) if (candidates[i]) k++;
    if (k === 0 || (k - 1) * text.length < this.minWork) return undefined;
    if (!this.set) {
      this.fallbackCount++;
      return undefined;
    }
    let matched: number[];
    try {
      matched = this.set.match(bytes.of(text));
    } catch {
      // RE2 throws when the set's automaton outgrows its memory budget on this line.
      this.fallbackCount++;
      return undefined;
    }
    const verdict = this.verdict;
    for (let i = 0; i < candidates.length; i++) verdict[i] = candidates[i] === true;
    for (const i of this.members) verdict[i] = false;
    for (const m of matched) {
      const i = this.members[m] as number;
      verdict[i] = candidates[i] === true;
    }
    return verdict;
  }

  /** How many screens that would have used the set fell back to one test per rule, ever. */
  fallbacks(): number {
    return this.fallbackCount;
  }
}

type RE2Set = Pick<InstanceType<typeof RE2.Set>, 'match'>;
export type SetCompiler = (sources: readonly string[]) => RE2Set | undefined;

/** Undefined when the combined program is too large for RE2; the rules are then tested one by one. */
function compileSet(sources: readonly string[]): RE2Set | undefined {
  try {
    // Strings, not RE2 objects, so the set translates each source exactly as `new RE2` did; 'u' is
    // what RE2 objects are anyway (UTF-8), and keeps the addon from warning.
    return new RE2.Set(sources, 'u');
  } catch {
    return undefined;
  }
}
