import { RE2JS } from 're2js';
import { foldForLiteral, type RequiredLiteral, requiredLiteral } from './literal.ts';

/**
 * A rule pattern compiled with NPD's semantics: RE2 syntax, searched unanchored, and required to match
 * up to the end of the text (NPD appends `\z`; we group the expression first so a top-level `|` is
 * anchored as a whole, as NPD does since PR #1338). RE2 guarantees matching in linear time.
 */
export interface CompiledPattern {
  readonly source: string;
  /** True when no match can contain a newline or depend on the buffer's start. */
  readonly lastLineOnly: boolean;
  readonly literal: RequiredLiteral | undefined;
  /** Returns the match, or undefined. `groups[0]` is the whole match. */
  exec(text: string): PatternMatch | undefined;
}

export interface PatternMatch {
  readonly start: number;
  readonly end: number;
  readonly groups: readonly (string | undefined)[];
}

/** Throws RE2JSSyntaxException (or RE2JSException) with RE2's message when the pattern is invalid. */
export function compilePattern(source: string): CompiledPattern {
  const re = RE2JS.compile(`(?:${source})\\z`);
  const literal = requiredLiteral(source);
  const groupCount = re.groupCount();
  return {
    source,
    lastLineOnly: cannotCrossLines(source),
    literal,
    exec(text) {
      if (literal && !containsLiteral(text, literal)) return undefined;
      const m = re.matcher(text);
      if (!m.find()) return undefined;
      const groups: (string | undefined)[] = [];
      for (let g = 0; g <= groupCount; g++) groups.push(m.group(g) ?? undefined);
      return { start: m.start(), end: m.end(), groups };
    },
  };
}

/** Returns the RE2 error for an invalid pattern, or undefined when it compiles. */
export function patternError(source: string): string | undefined {
  try {
    RE2JS.compile(`(?:${source})\\z`);
    return undefined;
  } catch (err) {
    return err instanceof Error ? err.message : String(err);
  }
}

export function containsLiteral(text: string, literal: RequiredLiteral): boolean {
  return literal.ignoreCase ? foldForLiteral(text).includes(literal.text) : text.includes(literal.text);
}

/**
 * Conservative: anything that might match a newline (\s, negated classes, (?s), escapes of code
 * points, Unicode classes) or that anchors to the start of the joined buffer (^, \A, (?m)) makes the
 * rule evaluate against the whole buffer, exactly as NPD does.
 */
const MAY_CROSS_LINES = /\\[nsDWpPxvf0-7AQ]|\[\^|\[:(?:space|cntrl|\^)|\(\?[a-zA-Z]*[sm]|\^|\n/;

function cannotCrossLines(source: string): boolean {
  return !MAY_CROSS_LINES.test(source);
}
