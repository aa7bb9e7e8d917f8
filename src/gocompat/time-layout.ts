/**
 * Go reference-time layouts ("Mon Jan 2 15:04:05 MST 2006"), as NPD's filelog `timestampFormat` uses
 * them. The tokenizer follows Go's time.nextStdChunk, so a layout splits exactly where Go splits it.
 */

export type Std =
  | 'longMonth'
  | 'month'
  | 'numMonth'
  | 'zeroMonth'
  | 'longWeekDay'
  | 'weekDay'
  | 'day'
  | 'underDay'
  | 'zeroDay'
  | 'hour'
  | 'hour12'
  | 'zeroHour12'
  | 'minute'
  | 'zeroMinute'
  | 'second'
  | 'zeroSecond'
  | 'longYear'
  | 'year'
  | 'PM'
  | 'pm'
  | 'tz'
  | 'isoTZ'
  | 'isoSecondsTZ'
  | 'isoShortTZ'
  | 'isoColonTZ'
  | 'isoColonSecondsTZ'
  | 'numTZ'
  | 'numSecondsTZ'
  | 'numShortTZ'
  | 'numColonTZ'
  | 'numColonSecondsTZ'
  | 'fracSecond0'
  | 'fracSecond9';

export type Chunk =
  | { readonly kind: 'literal'; readonly text: string }
  | { readonly kind: 'std'; readonly std: Std; readonly text: string };

export interface GoLayout {
  readonly layout: string;
  readonly chunks: readonly Chunk[];
  /** Without a year Go yields year 0, which callers replace with a recent year. */
  readonly hasYear: boolean;
  /** The layout carries a zone or offset; otherwise values are read in local time. */
  readonly hasZone: boolean;
}

/** Fixed tokens by first character, longest first, as Go tries them. */
const TOKENS: Readonly<Record<string, readonly (readonly [string, Std])[]>> = {
  '-': [
    ['-07:00:00', 'numColonSecondsTZ'],
    ['-070000', 'numSecondsTZ'],
    ['-07:00', 'numColonTZ'],
    ['-0700', 'numTZ'],
    ['-07', 'numShortTZ'],
  ],
  Z: [
    ['Z07:00:00', 'isoColonSecondsTZ'],
    ['Z070000', 'isoSecondsTZ'],
    ['Z07:00', 'isoColonTZ'],
    ['Z0700', 'isoTZ'],
    ['Z07', 'isoShortTZ'],
  ],
  '0': [
    ['01', 'zeroMonth'],
    ['02', 'zeroDay'],
    ['03', 'zeroHour12'],
    ['04', 'zeroMinute'],
    ['05', 'zeroSecond'],
    ['06', 'year'],
  ],
  '1': [
    ['15', 'hour'],
    ['1', 'numMonth'],
  ],
  '2': [
    ['2006', 'longYear'],
    ['2', 'day'],
  ],
  '3': [['3', 'hour12']],
  '4': [['4', 'minute']],
  '5': [['5', 'second']],
  P: [['PM', 'PM']],
  p: [['pm', 'pm']],
};

const ZONES: ReadonlySet<Std> = new Set<Std>([
  'tz',
  ...(TOKENS['-'] ?? []).map(([, s]) => s),
  ...(TOKENS.Z ?? []).map(([, s]) => s),
]);

const startsLower = (s: string, at: number) => /^[a-z]/.test(s.slice(at, at + 1));

/** The std token at `i`, or undefined. Names followed by a lower-case letter are words, not tokens. */
function tokenAt(layout: string, i: number): { std: Std | 'unsupported'; text: string } | undefined {
  const rest = layout.slice(i);
  if (rest.startsWith('January')) return { std: 'longMonth', text: 'January' };
  if (rest.startsWith('Jan') && !startsLower(rest, 3)) return { std: 'month', text: 'Jan' };
  if (rest.startsWith('Monday')) return { std: 'longWeekDay', text: 'Monday' };
  if (rest.startsWith('Mon') && !startsLower(rest, 3)) return { std: 'weekDay', text: 'Mon' };
  if (rest.startsWith('MST')) return { std: 'tz', text: 'MST' };
  // Day-of-year tokens need day-of-year arithmetic no NPD config uses; refuse them loudly.
  if (rest.startsWith('002') || rest.startsWith('__2')) return { std: 'unsupported', text: rest.slice(0, 3) };
  if (rest.startsWith('_2') && !rest.startsWith('_2006')) return { std: 'underDay', text: '_2' };
  const frac = /^[.,](0+|9+)(?![0-9])/.exec(rest);
  if (frac) return { std: frac[1]?.startsWith('0') ? 'fracSecond0' : 'fracSecond9', text: frac[0] };
  for (const [text, std] of TOKENS[rest[0] ?? ''] ?? []) if (rest.startsWith(text)) return { std, text };
  return undefined;
}

/** Splits a layout into literals and tokens; an Error names a token this parser does not support. */
export function compileGoLayout(layout: string): GoLayout | Error {
  const chunks: Chunk[] = [];
  let literal = '';
  for (let i = 0; i < layout.length; ) {
    const token = tokenAt(layout, i);
    if (!token) {
      literal += layout[i];
      i++;
      continue;
    }
    if (token.std === 'unsupported')
      return new Error(`layout token "${token.text}" (day of year) is not supported`);
    if (literal !== '') chunks.push({ kind: 'literal', text: literal });
    literal = '';
    chunks.push({ kind: 'std', std: token.std, text: token.text });
    i += token.text.length;
  }
  if (literal !== '') chunks.push({ kind: 'literal', text: literal });
  const stds = chunks.flatMap((c) => (c.kind === 'std' ? [c.std] : []));
  return {
    layout,
    chunks,
    hasYear: stds.includes('longYear') || stds.includes('year'),
    hasZone: stds.some((s) => ZONES.has(s)),
  };
}
