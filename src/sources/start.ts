import * as nodeFs from 'node:fs';
import { join } from 'node:path';
import type { Logger } from '../core/logger.ts';
import type { LogSourceConfig, SourceDeps } from './source.ts';
import { readUptimeMs, startTime, type TextFileReader } from './start-time.ts';

/**
 * NPD's start time for the journald and filelog sources. If the uptime cannot be read, only the
 * lookback bounds the replay: reading a little too much beats not starting at all.
 */
export function sourceStartTime(
  config: LogSourceConfig,
  deps: SourceDeps,
  logger: Logger,
  fs: TextFileReader = nodeFs,
): number {
  const now = deps.clock.now();
  const uptime = readUptimeMs(fs, join(deps.paths.proc, 'uptime'));
  if (uptime instanceof Error) {
    logger.warn({ err: uptime.message }, 'cannot read uptime; start position uses lookback only');
    return now - config.lookbackMs;
  }
  return startTime(now, uptime, config.lookbackMs, config.delayMs);
}
