import type { MonitorHealth } from './types.ts';

/** An unhealthy MonitorHealth; `since` (when the failure began) only when the monitor knows it. */
export function unhealthy(up: boolean, detail: string, since: number | undefined): MonitorHealth {
  return since === undefined ? { up, healthy: false, detail } : { up, healthy: false, detail, since };
}
