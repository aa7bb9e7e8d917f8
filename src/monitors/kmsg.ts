import { join } from 'node:path';
import type { LogMonitorConfig } from '../config/types.ts';
import type { LogLine } from '../types.ts';
import type { MonitorDeps } from './deps.ts';
import { KmsgReader } from './kmsg-reader.ts';
import type { LogSource } from './log-source.ts';

/** The kernel ring buffer as a log source. NPD ignores logPath for kmsg; so do we. */
export function createKmsgSource(config: LogMonitorConfig, deps: MonitorDeps): LogSource {
  let reader: KmsgReader | undefined;
  let deliver: (lines: readonly LogLine[]) => void = () => {};
  const make = () =>
    new KmsgReader({
      clock: deps.clock,
      registry: deps.registry,
      logger: deps.logger.child({ source: config.source, plugin: 'kmsg' }),
      onLines: (lines) => deliver(lines),
      source: config.source,
      path: join(deps.paths.dev, 'kmsg'),
      uptimePath: join(deps.paths.proc, 'uptime'),
      lookbackMs: config.lookbackMs,
      delayMs: config.delayMs,
    });
  return {
    start(onLines) {
      deliver = onLines;
      reader = make();
      reader.start();
    },
    async stop() {
      reader?.stop();
    },
    health() {
      return reader?.health() ?? { up: false, healthy: false, detail: 'not started' };
    },
  };
}
