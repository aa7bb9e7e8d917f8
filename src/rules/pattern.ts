import RE2 from 're2';
import type { LineBytes } from './line-bytes.ts';
import { foldForLiteral, type RequiredLiteral, requiredLiteral } from './literal.ts';

/**
 * A rule pattern compiled with NPD's semantics: RE2 syntax, searched unanchored, and required to match
 * up to the end of the text (NPD appends `\z`; we group the expression first so a top-level `|` is
 * anchored as a whole, as NPD does since PR #1338). The engine is Google's RE2 through the `re2`
 * addon: linear time, and a reverse DFA makes end-anchored patterns cheap even on 64 KiB lines.
 */
export interface CompiledPattern {
  readonly source: string;
  /** True when no match can contain a newline or depend on the buffer's start. */
  readonly lastLineOnly: boolean;
  readonly literal: RequiredLiteral | undefined;
  /** The expression RE2 runs, NPD's anchoring included: what a PatternSet combines. */
  readonly anchored: string;
  /** True when test() needs RE2, i.e. a string search cannot answer it. */
  readonly regexTest: boolean;
  /**
   * Whether the pattern matches; far cheaper than exec because RE2 skips submatch extraction. `bytes`
   * encodes the text once for every pattern that reads it.
   */
  test(text: string, bytes?: LineBytes): boolean;
  /** Returns the match, or undefined. `groups[0]` is the whole match. */
  exec(text: string): PatternMatch | undefined;
}

export interface PatternMatch {
  readonly start: number;
  readonly end: number;
  readonly groups: readonly (string | undefined)[];
  readonly named: Readonly<Record<string, string | undefined>>;
}

/** Throws SyntaxError with RE2's message when the pattern is invalid. */
export function compilePattern(source: string): CompiledPattern {
  const anchored = `(?:${source})\\z`;
  const re = new RE2(anchored);
  const literal = requiredLiteral(source);
  const plain = plainTest(source);
  return {
    source,
    lastLineOnly: cannotCrossLines(source),
    literal,
    anchored,
    regexTest: plain === undefined,
    test(text, bytes) {
      if (plain) return plain(text);
      if (literal && !containsLiteral(text, literal)) return false;
      // The addon's own conversion of a fresh string costs ~4 µs on a 110-character line; a Buffer
      // made here costs ~0.7 µs more than matching alone (test/bench, npm run bench -- rules).
      return re.test(bytes ? bytes.of(text) : Buffer.from(text));
    },
    exec(text) {
      if (literal && !containsLiteral(text, literal)) return undefined;
      const m = re.exec(text);
      if (!m) return undefined;
      return { start: m.index, end: m.index + m[0].length, groups: [...m], named: m.groups ?? {} };
    },
  };
}

/** `text`, `.*text`, `text$` or `text.*` with no metacharacters in `text` (escaped punctuation is fine). */
const PLAIN = /^(?:\.\*)?((?:[^\\.*+?()[\]{}|^$\n]|\\[!-/:-@[-`{-~])+)(\.\*|\$)?$/;

/**
 * Many NPD rules are a literal, perhaps followed by `.*`. Under NPD's `(?:…)\z` those need no regex:
 * `L` and `L$` mean the text ends with L, and `L.*` means L occurs after the last newline (RE2's `.`
 * stops at newlines). String search answers in tens of nanoseconds where RE2 needs a microsecond.
 */
function plainTest(source: string): ((text: string) => boolean) | undefined {
  const m = PLAIN.exec(source);
  if (!m) return undefined;
  const text = (m[1] as string).replace(/\\(.)/g, '$1');
  if (m[2] !== '.*') return (line) => line.endsWith(text);
  return (line) => line.lastIndexOf(text) > line.lastIndexOf('\n');
}

/** Returns the RE2 error for an invalid pattern, or undefined when it compiles. */
export function patternError(source: string): string | undefined {
  try {
    new RE2(source);
    new RE2(`(?:${source})\\z`);
    return undefined;
  } catch (err) {
    return err instanceof Error ? err.message : String(err);
  }
}

export function containsLiteral(text: string, literal: RequiredLiteral): boolean {
  const line = literal.ignoreCase ? foldForLiteral(text) : text;
  for (const t of literal.texts) if (line.includes(t)) return true;
  return false;
}

/**
 * Conservative: anything that might match a newline (\s, negated classes, (?s), escapes of code
 * points, Unicode classes) or that anchors to the start of the joined buffer (^, \A, (?m)) makes the
 * rule evaluate against the whole buffer, exactly as NPD does.
 */
const MAY_CROSS_LINES =
  /\\[nsDWpPxvfrta0-7AQC]|\[\^|\[:(?:space|cntrl|ascii|\^)|\(\?[a-zA-Z]*[sm]|\^|[\x00-\x0a]/;

function cannotCrossLines(source: string): boolean {
  return !MAY_CROSS_LINES.test(source);
}
