import type { Probe } from '../server/http.ts';
import type { Exporter } from './exporter.ts';

/**
 * /readyz: ready once the Node shows this agent's conditions. An agent with nothing to write says so,
 * instead of claiming a sync that never happened.
 */
export function readiness(exporter: Exporter | undefined, updateNodeConditions: boolean): Probe {
  if (!exporter) return { ok: false, detail: 'starting\n' };
  if (exporter.mode === 'standalone') return { ok: true, detail: 'standalone: nothing to sync\n' };
  if (!updateNodeConditions)
    return { ok: true, detail: '--k8s-exporter-update-node-conditions=false: nothing to sync\n' };
  const synced = exporter.conditions.synced();
  return { ok: synced, detail: synced ? 'node sync ok\n' : 'node conditions not synced\n' };
}

/**
 * /healthz: the monitors' liveness, with a line for a degraded diagnostics feature. That line never
 * fails the probe: a restart would not help, and the agent's monitors are what liveness guards.
 */
export function liveness(monitors: Probe, exporter: Exporter | undefined): Probe {
  const diagnostics = exporter?.diagnostics?.health();
  return diagnostics ? { ok: monitors.ok, detail: `${monitors.detail}${diagnostics}\n` } : monitors;
}
