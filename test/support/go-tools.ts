/**
 * The real operator tools (helm, promtool, the prometheus-operator CRDs) for the Helm, alert and
 * deploy tests. test/tools/go-tools.sh does the (slow, cached) Go builds; this module only runs it
 * and reads the KEY=value lines it prints.
 */
import { join } from 'node:path';
import { needVar, scriptVars } from './script-vars.ts';

export const GO_TOOLS_SCRIPT = join(import.meta.dirname, '..', 'tools', 'go-tools.sh');

export interface GoTools {
  readonly helm: string;
  readonly promtool: string;
  /** Folder of monitoring.coreos.com_*.yaml from the prometheus-operator module's example/. */
  readonly crdDir: string;
}

let cached: Promise<GoTools> | undefined;

/** Runs go-tools.sh once per process (a no-op after the first build) and returns what it built. */
export function ensureGoTools(): Promise<GoTools> {
  cached ??= scriptVars(GO_TOOLS_SCRIPT).then((vars) => ({
    helm: needVar(vars, 'HELM', GO_TOOLS_SCRIPT),
    promtool: needVar(vars, 'PROMTOOL', GO_TOOLS_SCRIPT),
    crdDir: needVar(vars, 'PROMETHEUS_OPERATOR_CRDS', GO_TOOLS_SCRIPT),
  }));
  return cached;
}
