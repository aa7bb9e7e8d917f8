/**
 * Where a kmsg reader starts, in words, for the start-up summary. The device always opens at the
 * ring's oldest record; the start time (start-time.ts) decides how much of that backlog is delivered.
 */
export function kmsgStartPosition(
  bootTimeMs: number,
  startAtMs: number,
  lookbackMs: number,
  delayMs: number,
): string {
  if (startAtMs > bootTimeMs + delayMs) {
    if (lookbackMs === 0) return 'new records only (lookback 0s)';
    return `from the lookback: records since ${new Date(startAtMs).toISOString()}`;
  }
  if (delayMs > 0) return `from the start of the ring, after the first ${delayMs / 1000}s of boot (delay)`;
  return 'from the start of the ring';
}
