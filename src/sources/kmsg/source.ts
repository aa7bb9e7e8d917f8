import { join } from 'node:path';
import type { LogLine } from '../../core/types.ts';
import type { LogSource, LogSourceConfig, SourceDeps } from '../source.ts';
import { KmsgReader, type KmsgReaderOptions } from './reader.ts';

export type KmsgSourceOptions = Pick<KmsgReaderOptions, 'device' | 'fs'>;

/** The kernel ring buffer as a log source. NPD ignores logPath for kmsg; so do we. */
export function createKmsgSource(
  config: LogSourceConfig,
  deps: SourceDeps,
  opts: KmsgSourceOptions = {},
): LogSource {
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
      ...opts,
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
    position() {
      return reader?.startsFrom === undefined ? undefined : `${config.source}: ${reader.startsFrom}`;
    },
  };
}
