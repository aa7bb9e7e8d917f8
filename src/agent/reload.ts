import type { LoadedConfig } from '../config/load.ts';
import type { Monitor } from '../monitors/monitor.ts';

export interface RunningMonitor {
  readonly loaded: LoadedConfig;
  readonly monitor: Monitor;
}

export interface ReloadPlan {
  readonly keep: readonly RunningMonitor[];
  readonly change: readonly { readonly running: RunningMonitor; readonly next: LoadedConfig }[];
  readonly remove: readonly RunningMonitor[];
  readonly add: readonly LoadedConfig[];
}

/** Which monitors a new configuration keeps, changes, stops and adds; matched by file and kind. */
export function planReload(running: readonly RunningMonitor[], next: readonly LoadedConfig[]): ReloadPlan {
  const key = (l: LoadedConfig) => `${l.kind}\0${l.file}`;
  const byKey = new Map(running.map((r) => [key(r.loaded), r]));
  const keep: RunningMonitor[] = [];
  const change: { running: RunningMonitor; next: LoadedConfig }[] = [];
  const add: LoadedConfig[] = [];
  for (const loaded of next) {
    const current = byKey.get(key(loaded));
    byKey.delete(key(loaded));
    if (!current) add.push(loaded);
    else if (JSON.stringify(current.loaded.config) === JSON.stringify(loaded.config)) keep.push(current);
    else change.push({ running: current, next: loaded });
  }
  return { keep, change, remove: [...byKey.values()], add };
}
