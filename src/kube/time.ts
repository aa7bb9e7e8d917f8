/**
 * metav1.Time on the wire: RFC3339 at second precision in UTC, e.g. 2006-01-02T15:04:05Z. Go truncates
 * (it never rounds), so a timestamp never moves into the next second.
 */
export function formatRfc3339Seconds(ms: number): string {
  return `${new Date(Math.floor(ms / 1000) * 1000).toISOString().slice(0, 19)}Z`;
}

/** Parses a metav1.Time (fractional seconds accepted, as Go's time.RFC3339 does); undefined if invalid. */
export function parseKubeTime(value: unknown): number | undefined {
  if (typeof value !== 'string' || value === '') return undefined;
  const ms = Date.parse(value);
  return Number.isNaN(ms) ? undefined : ms;
}

/**
 * metav1.MicroTime (eventTime, series.lastObservedTime): the server parses exactly six fractional digits
 * and rejects toISOString()'s three, so the milliseconds are padded with zeros.
 */
export function formatMicroTime(ms: number): string {
  const whole = Math.floor(ms);
  return `${new Date(whole).toISOString().slice(0, 23)}000Z`;
}
