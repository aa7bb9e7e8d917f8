import type { LoadedConfig } from '../config/load.ts';
import type { Condition } from '../core/types.ts';
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

/** What applying a reload needs from the agent. add and remove never throw (the supervisor retries). */
export interface ReloadTarget {
  create(loaded: LoadedConfig): Monitor;
  add(monitor: Monitor): Promise<void>;
  remove(monitor: Monitor): Promise<void>;
  conditionsOf(monitor: Monitor): Condition[];
  /** A monitor's in-place reconfigure threw; the reload goes on by swapping it for a new one. */
  reconfigureFailed(monitor: Monitor, err: unknown): void;
}

type Reconfigurable = Monitor & { reconfigure?: (config: unknown) => boolean };

/**
 * Applies a plan all or nothing: every monitor the new config needs is built before any running one
 * is touched, so a config that fails to build (create throws) leaves the running set exactly as it
 * was and the error reaches the caller as a rejected reload. Building has no side effects to undo:
 * monitors open nothing until they are started.
 */
export async function applyReload(plan: ReloadPlan, target: ReloadTarget): Promise<RunningMonitor[]> {
  const built = {
    change: plan.change.map((c) => ({ ...c, monitor: target.create(c.next) })),
    add: plan.add.map((loaded) => ({ loaded, monitor: target.create(loaded) })),
  };
  for (const r of plan.remove) await target.remove(r.monitor);
  const changed: RunningMonitor[] = [];
  for (const { running, next, monitor } of built.change) {
    if (reconfigureInPlace(running.monitor, next, target)) {
      changed.push({ loaded: next, monitor: running.monitor });
      continue;
    }
    const conditions = target.conditionsOf(running.monitor);
    await target.remove(running.monitor);
    await target.add(monitor);
    monitor.restore?.(conditions);
    changed.push({ loaded: next, monitor });
  }
  for (const r of built.add) await target.add(r.monitor);
  return [...plan.keep, ...changed, ...built.add];
}

/** Keeps the read position when only the rules changed; false (also on a throw) means swap monitors. */
function reconfigureInPlace(monitor: Reconfigurable, next: LoadedConfig, target: ReloadTarget): boolean {
  try {
    return monitor.reconfigure?.call(monitor, next.config) === true;
  } catch (err) {
    target.reconfigureFailed(monitor, err);
    return false;
  }
}
