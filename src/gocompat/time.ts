import type { Chunk, GoLayout, Std } from './time-layout.ts';
import {
  fail,
  fraction,
  lookup,
  num,
  offsetOf,
  ParseError,
  ranged,
  skip,
  zoneAbbreviation,
} from './time-scan.ts';

export { compileGoLayout, type GoLayout } from './time-layout.ts';

/** Wall-clock time in one zone. Injected so tests do not depend on the machine's TZ. */
export interface WallZone {
  /** Epoch milliseconds of a wall-clock time; month is 1-12. */
  toEpochMs(y: number, mo: number, d: number, h: number, mi: number, s: number, ms: number): number;
  yearAt(epochMs: number): number;
}

/** The process's local zone (TZ, /etc/localtime), like Go's time.Local. */
export function localZone(): WallZone {
  return {
    toEpochMs(y, mo, d, h, mi, s, ms) {
      const date = new Date(2000, 0, 1);
      date.setFullYear(y, mo - 1, d);
      date.setHours(h, mi, s, ms);
      return date.getTime();
    },
    yearAt: (epochMs) => new Date(epochMs).getFullYear(),
  };
}

/** A fixed offset east of UTC, in seconds. */
export function fixedZone(offsetSeconds: number): WallZone {
  return {
    toEpochMs(y, mo, d, h, mi, s, ms) {
      const date = new Date(Date.UTC(2000, 0, 1));
      // setUTCFullYear, because Date.UTC maps years 0-99 to 1900-1999.
      date.setUTCFullYear(y, mo - 1, d);
      date.setUTCHours(h, mi, s, ms);
      return date.getTime() - offsetSeconds * 1000;
    },
    yearAt: (epochMs) => new Date(epochMs + offsetSeconds * 1000).getUTCFullYear(),
  };
}

interface Fields {
  year: number;
  month: number;
  day: number;
  hour: number;
  minute: number;
  second: number;
  nanos: number;
  pm: boolean | undefined;
  /** Seconds east of UTC when the value carries an offset (or UTC). */
  offset: number | undefined;
  /** A zone abbreviation other than UTC. */
  zoneName: string | undefined;
}

const DAY_MS = 86_400_000;
const MONTHS = [
  'January',
  'February',
  'March',
  'April',
  'May',
  'June',
  'July',
  'August',
  'September',
  'October',
  'November',
  'December',
];
const DAYS = ['Sunday', 'Monday', 'Tuesday', 'Wednesday', 'Thursday', 'Friday', 'Saturday'];

/** Consumes one token's worth of `v` into `f` and returns the rest. `next` is the following chunk. */
function step(f: Fields, std: Std, v: string, next: Chunk | undefined): string {
  switch (std) {
    case 'longYear': {
      if (!/^\d{4}/.test(v)) return fail('expected a four-digit year');
      f.year = Number(v.slice(0, 4));
      return v.slice(4);
    }
    case 'year': {
      if (!/^\d{2}/.test(v)) return fail('expected a two-digit year');
      const y = Number(v.slice(0, 2));
      f.year = y >= 69 ? 1900 + y : 2000 + y;
      return v.slice(2);
    }
    case 'longMonth':
    case 'month': {
      const [i, rest] = lookup(std === 'month' ? MONTHS.map((m) => m.slice(0, 3)) : MONTHS, v);
      f.month = i + 1;
      return rest;
    }
    case 'longWeekDay':
    case 'weekDay':
      // Go checks the name and otherwise ignores the weekday.
      return lookup(std === 'weekDay' ? DAYS.map((d) => d.slice(0, 3)) : DAYS, v)[1];
    case 'numMonth':
    case 'zeroMonth': {
      const [m, rest] = num(v, std === 'zeroMonth');
      f.month = ranged(m, 1, 12, 'month');
      return rest;
    }
    case 'day':
    case 'underDay':
    case 'zeroDay': {
      const [d, rest] = num(std === 'underDay' && v[0] === ' ' ? v.slice(1) : v, std === 'zeroDay');
      f.day = d;
      return rest;
    }
    default:
      return stepTime(f, std, v, next);
  }
}

function stepTime(f: Fields, std: Std, v: string, next: Chunk | undefined): string {
  switch (std) {
    case 'hour':
    case 'hour12':
    case 'zeroHour12': {
      const [h, rest] = num(v, std === 'zeroHour12');
      f.hour = ranged(h, 0, std === 'hour' ? 23 : 12, 'hour');
      return rest;
    }
    case 'minute':
    case 'zeroMinute': {
      const [m, rest] = num(v, std === 'zeroMinute');
      f.minute = ranged(m, 0, 59, 'minute');
      return rest;
    }
    case 'second':
    case 'zeroSecond': {
      const [s, rest] = num(v, std === 'zeroSecond');
      f.second = ranged(s, 0, 59, 'second');
      const nextIsFraction =
        next?.kind === 'std' && (next.std === 'fracSecond0' || next.std === 'fracSecond9');
      // Like Go, a fraction the layout does not mention is still read after the seconds.
      const frac = nextIsFraction ? undefined : /^[.,](\d+)/.exec(rest);
      if (!frac) return rest;
      f.nanos = fraction(frac[1] as string);
      return rest.slice(frac[0].length);
    }
    default:
      return stepZone(f, std, v);
  }
}

function stepZone(f: Fields, std: Std, v: string): string {
  if (std === 'PM' || std === 'pm') {
    const p = v.slice(0, 2);
    const [am, pmText] = std === 'PM' ? ['AM', 'PM'] : ['am', 'pm'];
    if (p !== am && p !== pmText) return fail(`expected ${am} or ${pmText}`);
    f.pm = p === pmText;
    return v.slice(2);
  }
  if (std === 'tz') {
    if (v.startsWith('UTC')) {
      f.offset = 0;
      return v.slice(3);
    }
    const n = zoneAbbreviation(v);
    f.zoneName = v.slice(0, n);
    return v.slice(n);
  }
  if (std.startsWith('iso') && v[0] === 'Z') {
    f.offset = 0;
    return v.slice(1);
  }
  const [offset, rest] = offsetOf(v, std);
  f.offset = offset;
  return rest;
}

/** ".000" wants exactly that many digits; ".999" is optional and takes any number of digits, as in Go. */
function stepFraction(f: Fields, chunk: { std: Std; text: string }, v: string): string {
  const frac = /^[.,](\d+)/.exec(v);
  if (chunk.std === 'fracSecond9') {
    if (!frac) return v;
    f.nanos = fraction(frac[1] as string);
    return v.slice(frac[0].length);
  }
  const n = chunk.text.length;
  if (!frac || (frac[1] as string).length < n - 1) return fail(`expected ${n - 1} fraction digits`);
  f.nanos = fraction(v.slice(1, n));
  return v.slice(n);
}

function runChunks(layout: GoLayout, value: string): Fields {
  const f: Fields = {
    year: 0,
    month: -1,
    day: -1,
    hour: 0,
    minute: 0,
    second: 0,
    nanos: 0,
    pm: undefined,
    offset: undefined,
    zoneName: undefined,
  };
  let v = value;
  layout.chunks.forEach((chunk, i) => {
    if (chunk.kind === 'literal') v = skip(v, chunk.text);
    else if (chunk.std === 'fracSecond0' || chunk.std === 'fracSecond9') v = stepFraction(f, chunk, v);
    else v = step(f, chunk.std, v, layout.chunks[i + 1]);
  });
  if (v !== '') fail(`extra text "${v}"`);
  if (f.pm === true && f.hour < 12) f.hour += 12;
  if (f.pm === false && f.hour === 12) f.hour = 0;
  if (f.month < 0) f.month = 1;
  if (f.day < 0) f.day = 1;
  // Go validates against year 0 (a leap year) when the layout has no year, so "Feb 29" passes.
  if (f.day < 1 || f.day > daysIn(f.month, f.year)) fail('day out of range');
  return f;
}

function daysIn(month: number, year: number): number {
  if (month !== 2) return [31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31][month - 1] as number;
  const leap = year % 4 === 0 && (year % 100 !== 0 || year % 400 === 0);
  return leap ? 29 : 28;
}

function zoneFor(f: Fields, local: WallZone): WallZone {
  if (f.offset !== undefined) return fixedZone(f.offset);
  // Go uses the local offset for the local zone's own abbreviation and a zero offset for any other;
  // node logs carry the node's own zone, and its abbreviations cannot be listed portably, so: local.
  const gmt = f.zoneName && /^GMT([+-]\d{1,2})$/.exec(f.zoneName);
  if (f.zoneName === 'GMT') return fixedZone(0);
  if (gmt) return fixedZone(Number(gmt[1]) * 3600);
  return local;
}

export interface ParseOptions {
  /** Now, in epoch milliseconds: year-less layouts pick the year from it. */
  readonly nowMs: number;
  /** Defaults to the process's local zone. */
  readonly zone?: WallZone;
}

/**
 * Parses `value` with a Go layout, like time.ParseInLocation(layout, value, time.Local), into epoch
 * milliseconds (sub-millisecond digits dropped). A layout without a year takes the latest year that
 * puts the time no more than a day in the future: NPD adds the current year instead, which turns a
 * "Dec 31 23:59:59" line read on January 1st into a time a year ahead.
 */
export function parseGoTime(layout: GoLayout, value: string, opts: ParseOptions): number | Error {
  let f: Fields;
  try {
    f = runChunks(layout, value);
  } catch (err) {
    if (!(err instanceof ParseError)) throw err;
    return new Error(`parsing time "${value}" as "${layout.layout}": ${err.message}`);
  }
  const zone = zoneFor(f, opts.zone ?? localZone());
  const at = (year: number) =>
    zone.toEpochMs(year, f.month, f.day, f.hour, f.minute, f.second, Math.floor(f.nanos / 1e6));
  if (layout.hasYear) return at(f.year);
  const year = zone.yearAt(opts.nowMs);
  const candidate = at(year);
  return candidate > opts.nowMs + DAY_MS ? at(year - 1) : candidate;
}
