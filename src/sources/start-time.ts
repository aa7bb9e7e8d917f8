/**
 * NPD's log start position (pkg/systemlogmonitor/util GetStartTime), shared by the kmsg, journald and
 * filelog sources: a watcher never replays logs from before the current boot (plus `delay`), nor more
 * than `lookback` into the past.
 */

/** The file-system access this module needs, injected so tests need no /proc. */
export interface TextFileReader {
  readFileSync(path: string, encoding: 'utf8'): string;
}

export const DEFAULT_UPTIME_PATH = '/proc/uptime';

/**
 * Boot time as wall-clock milliseconds. Uptime counts suspended time while kmsg timestamps do not, so
 * after a suspend kmsg wall times come out early; NPD has the same approximation.
 */
export function bootTimeMs(nowMs: number, uptimeMs: number): number {
  return nowMs - uptimeMs;
}

/** max(bootTime + delay, now − lookback), all in milliseconds. */
export function startTime(nowMs: number, uptimeMs: number, lookbackMs: number, delayMs: number): number {
  return Math.max(bootTimeMs(nowMs, uptimeMs) + delayMs, nowMs - lookbackMs);
}

/** Parses /proc/uptime ("12345.67 54321.00\n": seconds up, seconds idle) into whole milliseconds. */
export function parseUptime(text: string): number | Error {
  const first = text.trim().split(/\s+/)[0] ?? '';
  if (!/^\d+(?:\.\d+)?$/.test(first)) return new Error(`unexpected uptime format "${text.slice(0, 40)}"`);
  return Math.round(Number(first) * 1000);
}

/** Reads the system uptime in milliseconds; errors come back as values, never thrown. */
export function readUptimeMs(fs: TextFileReader, path: string = DEFAULT_UPTIME_PATH): number | Error {
  let text: string;
  try {
    text = fs.readFileSync(path, 'utf8');
  } catch (err) {
    return new Error(`read ${path}: ${err instanceof Error ? err.message : String(err)}`);
  }
  return parseUptime(text);
}
