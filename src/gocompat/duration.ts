/**
 * Go's time.ParseDuration, because NPD configs and flags are written in it ("5m", "1h30m", "0", "300ms").
 */
const UNIT_MS: Readonly<Record<string, number>> = {
  ns: 1e-6,
  us: 1e-3,
  µs: 1e-3,
  μs: 1e-3,
  ms: 1,
  s: 1000,
  m: 60_000,
  h: 3_600_000,
};

/** Go durations are int64 nanoseconds: about 2562047h47m. */
const MAX_MS = 9_223_372_036_854.775;

const TERM = /^(\d+(?:\.\d*)?|\.\d+)(ns|us|µs|μs|ms|s|m|h)/;

/** Returns milliseconds, or an Error whose message explains what is wrong. */
export function parseGoDuration(input: string): number | Error {
  let s = input;
  if (s === '') return new Error('empty duration');
  let sign = 1;
  if (s[0] === '-' || s[0] === '+') {
    sign = s[0] === '-' ? -1 : 1;
    s = s.slice(1);
  }
  if (s === '0') return 0;
  if (s === '') return new Error(`invalid duration "${input}"`);
  let total = 0;
  while (s.length > 0) {
    const m = TERM.exec(s);
    if (!m) {
      return new Error(`invalid duration "${input}": use Go syntax such as 30s, 5m or 1h30m`);
    }
    total += Number(m[1]) * (UNIT_MS[m[2] as string] as number);
    s = s.slice(m[0].length);
  }
  if (total > MAX_MS) return new Error(`invalid duration "${input}": out of range`);
  return sign * total;
}

/** Formats milliseconds the way Go's Duration.String() does, e.g. 5m0s, 1h30m0s, 250ms. */
export function formatGoDuration(ms: number): string {
  if (ms === 0) return '0s';
  const sign = ms < 0 ? '-' : '';
  let rest = Math.abs(ms);
  if (rest < 0.001) return `${sign}${Math.round(rest * 1e6)}ns`;
  if (rest < 1) return `${sign}${Number((rest * 1000).toPrecision(12))}µs`;
  if (rest < 1000) return `${sign}${rest}ms`;
  const h = Math.floor(rest / 3_600_000);
  rest -= h * 3_600_000;
  const m = Math.floor(rest / 60_000);
  rest -= m * 60_000;
  const s = rest / 1000;
  if (h > 0) return `${sign}${h}h${m}m${s}s`;
  if (m > 0) return `${sign}${m}m${s}s`;
  return `${sign}${s}s`;
}
