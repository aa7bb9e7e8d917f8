import type { LogMonitorConfig, LogPlugin } from '../../rules/config.ts';
import type { LogSource } from '../../sources/source.ts';
import type { MonitorDeps } from '../deps.ts';
import type { MonitorType } from '../monitor.ts';
import { SystemLogMonitor } from './monitor.ts';
import { systemLogConfigKind } from './schema.ts';
import { withFileWriters, withJournalWriters } from './untrusted.ts';

export type LogSourceFactory = (config: LogMonitorConfig, deps: MonitorDeps) => LogSource;

/** Where each NPD log plugin's lines come from: the host's readers in the agent, recorded lines in replay. */
export type LogSourceFactories = Readonly<Record<LogPlugin, LogSourceFactory | undefined>>;

/** system-log-monitor: one SystemLogMonitor per config, over a source that may be shared through the hub. */
export function systemLogMonitorType(factories: LogSourceFactories): MonitorType<LogMonitorConfig> {
  return {
    configKind: systemLogConfigKind,
    create(loaded, deps) {
      const config = withFileWriters(
        withJournalWriters(loaded, deps.trustJournalWriters),
        deps.trustFileWriters,
      );
      const factory = factories[config.plugin];
      if (!factory)
        throw new Error(`${config.file}: plugin "${config.plugin}" is not available in this build`);
      // Built now even when shared, so that a bad source config fails here, at start-up, not in start().
      const own = factory(config, deps);
      const source = deps.sources ? deps.sources.share(readingKey(config), () => own) : own;
      return new SystemLogMonitor(config, source, deps);
    },
  };
}

/** Everything that decides which lines a log source delivers: monitors equal in it share a reader. */
function readingKey(c: LogMonitorConfig): string {
  return JSON.stringify([c.plugin, c.logPath, c.pluginConfig, c.lookbackMs, c.delayMs, c.trustedWriter]);
}
