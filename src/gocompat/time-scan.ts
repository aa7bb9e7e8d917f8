import type { Std } from './time-layout.ts';

/** Low-level scanners for Go time parsing; each consumes from the front of the value and returns the rest. */

export class ParseError extends Error {}

export const fail = (what: string): never => {
  throw new ParseError(what);
};

const isDigit = (s: string, i: number) => {
  const c = s.charCodeAt(i);
  return c >= 48 && c <= 57;
};

/** Go's getnum: one or two digits, exactly two when `fixed`. */
export function num(v: string, fixed: boolean): [number, string] {
  if (!isDigit(v, 0)) return fail('expected a digit');
  if (!isDigit(v, 1)) return fixed ? fail('expected two digits') : [Number(v[0]), v.slice(1)];
  return [Number(v.slice(0, 2)), v.slice(2)];
}

export function ranged(n: number, lo: number, hi: number, what: string): number {
  return n < lo || n > hi ? fail(`${what} out of range`) : n;
}

/** Go's lookup: a case-insensitive name prefix, returning its index. */
export function lookup(names: readonly string[], v: string): [number, string] {
  const lower = v.toLowerCase();
  const i = names.findIndex((n) => lower.startsWith(n.toLowerCase()));
  return i < 0 ? fail('unknown name') : [i, v.slice((names[i] as string).length)];
}

/** A space in the layout matches one or more spaces in the value, as in Go's skip. */
export function skip(v: string, literal: string): string {
  let value = v;
  for (let p = literal; p.length > 0; ) {
    if (p[0] === ' ') {
      if (value.length > 0 && value[0] !== ' ') return fail(`expected "${literal}"`);
      p = p.replace(/^ +/, '');
      value = value.replace(/^ +/, '');
      continue;
    }
    if (value[0] !== p[0]) return fail(`expected "${literal}"`);
    p = p.slice(1);
    value = value.slice(1);
  }
  return value;
}

/** Fraction digits after "." or ",": nanoseconds, extra digits beyond nine ignored. */
export function fraction(digits: string): number {
  return Number(digits.slice(0, 9).padEnd(9, '0'));
}

export function offsetOf(v: string, std: Std): [number, string] {
  const colon = std === 'numColonTZ' || std === 'isoColonTZ';
  const colonSec = std === 'numColonSecondsTZ' || std === 'isoColonSecondsTZ';
  const short = std === 'numShortTZ' || std === 'isoShortTZ';
  const secs = std === 'numSecondsTZ' || std === 'isoSecondsTZ';
  const len = colonSec ? 9 : colon ? 6 : short ? 3 : secs ? 7 : 5;
  if (v.length < len) fail('offset too short');
  if ((colon || colonSec) && v[3] !== ':') fail('expected ":" in offset');
  if (colonSec && v[6] !== ':') fail('expected ":" in offset');
  const digits = v.slice(1, len).replace(/:/g, '').padEnd(6, '0');
  const [hh, mm, ss] = [digits.slice(0, 2), digits.slice(2, 4), digits.slice(4, 6)].map(
    (d) => num(d, true)[0],
  );
  // Go accepts 24 hours and 60 minutes or seconds: people do write them.
  const seconds =
    (ranged(hh as number, 0, 24, 'offset hour') * 60 + ranged(mm as number, 0, 60, 'offset minute')) * 60 +
    ranged(ss as number, 0, 60, 'offset second');
  if (v[0] !== '+' && v[0] !== '-') fail('offset sign');
  return [v[0] === '-' ? -seconds : seconds, v.slice(len)];
}

/** Go's parseTimeZone: 3 upper-case letters, 4 ending in T (or WITA), 5 ending in T, ChST/MeST. */
export function zoneAbbreviation(v: string): number {
  if (v.startsWith('ChST') || v.startsWith('MeST')) return 4;
  if (v.startsWith('GMT')) return 3 + (/^[+-]\d{1,2}/.exec(v.slice(3))?.[0].length ?? 0);
  const upper = /^[A-Z]*/.exec(v)?.[0] ?? '';
  const n = upper.length;
  if (n === 3 || (n === 4 && (upper.endsWith('T') || upper === 'WITA')) || (n === 5 && upper.endsWith('T')))
    return n;
  return fail('not a zone abbreviation');
}
