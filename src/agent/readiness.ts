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
