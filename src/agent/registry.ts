import { nvmlLoader } from '../host/nvml/binding.ts';
import { customPluginMonitorType } from '../monitors/custom-plugin/monitor.ts';
import { GPU_CHECKS } from '../monitors/gpu/checks/index.ts';
import { gpuMonitorType } from '../monitors/gpu/monitor.ts';
import type { MonitorType } from '../monitors/monitor.ts';
import { probeMonitorType } from '../monitors/probe/monitor.ts';
import { type LogSourceFactories, systemLogMonitorType } from '../monitors/system-log/type.ts';
import { systemStatsMonitorType } from '../monitors/system-stats/monitor.ts';
import { createFilelogSource } from '../sources/filelog/source.ts';
import { createJournaldSource } from '../sources/journald/source.ts';
import { createKmsgSource } from '../sources/kmsg/source.ts';

/** The log sources of system-log-monitor, by NPD plugin name. */
function logSources(): LogSourceFactories {
  return {
    kmsg: createKmsgSource,
    journald: createJournaldSource,
    filelog: createFilelogSource,
  };
}

/** Every monitor type the agent knows, in one explicit list. */
export function monitorTypes(): readonly MonitorType[] {
  return [
    systemLogMonitorType(logSources()) as MonitorType,
    customPluginMonitorType as MonitorType,
    probeMonitorType as MonitorType,
    systemStatsMonitorType as MonitorType,
    gpuMonitorType((library) => nvmlLoader(library), GPU_CHECKS) as MonitorType,
  ];
}
