/**
 * Extracts a literal that every match of an RE2 pattern must contain. The rule engine checks for it
 * with a plain substring search before running the regex, which keeps the common case (a log line
 * that no rule is about) at a few hundred nanoseconds. The extraction is conservative: when in doubt
 * it returns undefined and the regex runs on every line.
 */
export interface RequiredLiteral {
  readonly text: string;
  readonly ignoreCase: boolean;
}

const QUANTIFIERS = new Set(['*', '?', '{']);
const ESCAPED_LITERALS = new Set([...'\\.+*?()|[]{}^$-/ #&~<>=!:,\'"@%`;_']);
const CLASS_ESCAPES = new Set([...'dDsSwWbBpPAzZQECx0123456789nrtfva']);

interface Scan {
  best: string;
  run: string;
}

export function requiredLiteral(pattern: string): RequiredLiteral | undefined {
  let src = pattern;
  let ignoreCase = false;
  if (src.startsWith('(?i)')) {
    ignoreCase = true;
    src = src.slice(4);
  }
  if (hasTopLevelAlternation(src) || /\\Q|\(\?[a-zA-Z-]*[)]/.test(src)) return undefined;
  const scan = scanLiterals(src);
  if (!scan || scan.best.length < 3) return undefined;
  if (ignoreCase && !/^[\x20-\x7e]+$/.test(scan.best)) return undefined;
  return { text: ignoreCase ? scan.best.toLowerCase() : scan.best, ignoreCase };
}

/**
 * Lower-cases a line so that an ASCII literal found in it means RE2's (?i) could match there too.
 * U+017F (long s) is the one non-ASCII letter whose lower case is not in RE2's fold orbit of its
 * ASCII partner; U+212A (Kelvin) lower-cases to k already.
 */
export function foldForLiteral(line: string): string {
  const lower = line.toLowerCase();
  return lower.includes('\u017f') ? lower.replaceAll('\u017f', 's') : lower;
}

function scanLiterals(src: string): Scan | undefined {
  const s: Scan = { best: '', run: '' };
  let i = 0;
  while (i < src.length) {
    const c = src[i] as string;
    if (c === '\\') {
      const next = src[i + 1];
      if (next === undefined) return undefined;
      if (ESCAPED_LITERALS.has(next) && !CLASS_ESCAPES.has(next)) {
        i = pushChar(s, src, next, i + 2);
      } else {
        endRun(s);
        i = skipEscape(src, i);
      }
    } else if (c === ')') {
      return undefined;
    } else if (c === '(' || c === '[') {
      endRun(s);
      const close = c === '(' ? skipGroup(src, i) : skipClass(src, i);
      if (close < 0) return undefined;
      i = close + 1;
    } else if (c === '{' && !isRepeat(src, i)) {
      i = pushChar(s, src, c, i + 1);
    } else if (c === '.' || c === '^' || c === '$' || c === '+' || QUANTIFIERS.has(c)) {
      if (c === '{') i = skipBraces(src, i);
      endRun(s);
      i += 1;
    } else {
      i = pushChar(s, src, c, i + 1);
    }
  }
  endRun(s);
  return s;
}

/** Index just past an escape such as \d, \x41, \x{263a}, \101 or \pL / \p{Greek}. */
function skipEscape(src: string, at: number): number {
  const kind = src[at + 1] as string;
  if ((kind === 'x' || kind === 'p' || kind === 'P') && src[at + 2] === '{') {
    const close = src.indexOf('}', at + 3);
    return close < 0 ? src.length : close + 1;
  }
  if (kind === 'x') return at + 4;
  if (kind === 'p' || kind === 'P') return at + 3;
  if (/[0-7]/.test(kind)) {
    let end = at + 2;
    while (end < at + 4 && /[0-7]/.test(src[end] ?? '')) end++;
    return end;
  }
  return at + 2;
}

/** RE2 reads `{` as a repetition only in the forms {n}, {n,} and {n,m}; otherwise it is a literal. */
function isRepeat(src: string, at: number): boolean {
  return /^\{\d+(?:,\d*)?\}/.test(src.slice(at, at + 24));
}

/** Adds a literal character unless a following quantifier makes it optional or repeatable. */
function pushChar(s: Scan, src: string, ch: string, next: number): number {
  const q = src[next];
  if (q !== undefined && QUANTIFIERS.has(q) && (q !== '{' || isRepeat(src, next))) {
    endRun(s);
    return next;
  }
  if (q === '+') {
    s.run += ch;
    endRun(s);
    return next;
  }
  s.run += ch;
  return next;
}

function endRun(s: Scan): void {
  if (s.run.length > s.best.length) s.best = s.run;
  s.run = '';
}

/** Index of the `)` closing the group that opens at `start`, honouring escapes and classes. */
function skipGroup(src: string, start: number): number {
  let depth = 0;
  for (let i = start; i < src.length; i++) {
    const c = src[i];
    if (c === '\\') i++;
    else if (c === '[') i = skipClass(src, i);
    else if (c === '(') depth++;
    else if (c === ')' && --depth === 0) return i;
    if (i < 0) return -1;
  }
  return -1;
}

/** Index of the `]` closing the class that opens at `start`. `]` first in a class is literal. */
function skipClass(src: string, start: number): number {
  let i = start + 1;
  if (src[i] === '^') i++;
  if (src[i] === ']') i++;
  for (; i < src.length; i++) {
    const c = src[i];
    if (c === '\\') i++;
    else if (c === '[' && src[i + 1] === ':') {
      const end = src.indexOf(':]', i + 2);
      if (end < 0) return -1;
      i = end + 1;
    } else if (c === ']') return i;
  }
  return -1;
}

function skipBraces(src: string, start: number): number {
  const end = src.indexOf('}', start);
  return end < 0 ? start : end;
}

function hasTopLevelAlternation(src: string): boolean {
  for (let i = 0; i < src.length; i++) {
    const c = src[i];
    if (c === '\\') i++;
    else if (c === '[') i = skipClass(src, i);
    else if (c === '(') i = skipGroup(src, i);
    else if (c === '|') return true;
    if (i < 0) return true;
  }
  return false;
}
