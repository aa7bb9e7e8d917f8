import { customPluginMonitorType } from '../monitors/custom-plugin/monitor.ts';
import type { MonitorDeps } from '../monitors/deps.ts';
import type { MonitorType } from '../monitors/monitor.ts';
import { probeMonitorType } from '../monitors/probe/monitor.ts';
import { SystemLogMonitor } from '../monitors/system-log/monitor.ts';
import { systemLogConfigKind } from '../monitors/system-log/schema.ts';
import { systemStatsMonitorType } from '../monitors/system-stats/monitor.ts';
import type { LogMonitorConfig, LogPlugin } from '../rules/config.ts';
import { createFilelogSource } from '../sources/filelog/source.ts';
import { createJournaldSource } from '../sources/journald/source.ts';
import { createKmsgSource } from '../sources/kmsg/source.ts';
import type { LogSource } from '../sources/source.ts';

type SourceFactory = (config: LogMonitorConfig, deps: MonitorDeps) => LogSource;

/** The log sources of system-log-monitor, by NPD plugin name. */
function logSources(): Readonly<Record<LogPlugin, SourceFactory | undefined>> {
  return {
    kmsg: createKmsgSource,
    journald: createJournaldSource,
    filelog: createFilelogSource,
  };
}

const systemLogMonitor: MonitorType<LogMonitorConfig> = {
  configKind: systemLogConfigKind,
  create(config, deps) {
    const factory = logSources()[config.plugin];
    if (!factory) throw new Error(`${config.file}: plugin "${config.plugin}" is not available in this build`);
    // Built now even when shared, so that a bad source config fails here, at start-up, not in start().
    const own = factory(config, deps);
    const source = deps.sources ? deps.sources.share(readingKey(config), () => own) : own;
    return new SystemLogMonitor(config, source, deps);
  },
};

/** Everything that decides which lines a log source delivers: monitors equal in it share a reader. */
function readingKey(c: LogMonitorConfig): string {
  return JSON.stringify([c.plugin, c.logPath, c.pluginConfig, c.lookbackMs, c.delayMs]);
}

/** Every monitor type the agent knows, in one explicit list. */
export function monitorTypes(): readonly MonitorType[] {
  return [
    systemLogMonitor as MonitorType,
    customPluginMonitorType as MonitorType,
    probeMonitorType as MonitorType,
    systemStatsMonitorType as MonitorType,
  ];
}
