import type { ConfigKind } from '../config/load.ts';
import { systemLogConfigKind } from '../config/log-monitor-schema.ts';
import type { LogMonitorConfig, LogPlugin } from '../config/types.ts';
import { customPluginMonitorType } from './custom-plugin.ts';
import type { MonitorDeps } from './deps.ts';
import { createFilelogSource } from './filelog.ts';
import { createJournaldSource } from './journald.ts';
import { createKmsgSource } from './kmsg.ts';
import type { LogSource } from './log-source.ts';
import type { Monitor } from './monitor.ts';
import { probeMonitorType } from './probe-monitor.ts';
import { SystemLogMonitor } from './system-log-monitor.ts';
import { systemStatsMonitorType } from './system-stats.ts';

/** A monitor type: the config it accepts and how to build a monitor from it. */
export interface MonitorType<C = unknown> {
  readonly configKind: ConfigKind<C>;
  create(config: C, deps: MonitorDeps): Monitor;
}

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
