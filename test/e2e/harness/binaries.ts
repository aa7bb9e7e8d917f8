/**
 * Building / finding the control-plane binaries. build.sh does the (slow, cached) Go builds; this
 * module only runs it and reads the KEY=value lines it prints.
 */
import * as path from 'node:path';
import { fileURLToPath } from 'node:url';
import { needVar, parseVars } from '../../support/script-vars.ts';
import { run, tail } from './processes.ts';
import type { ControlPlaneBinaries } from './types.ts';

export const REPO_ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../..');
export const BUILD_SCRIPT = path.join(REPO_ROOT, 'test/e2e/controlplane/build.sh');

/** Runs build.sh (a no-op after the first build) and returns the binaries it reports. */
export async function ensureControlPlaneBinaries(
  log?: (line: string) => void,
): Promise<ControlPlaneBinaries> {
  const { code, stdout, stderr } = await run('bash', [BUILD_SCRIPT], {
    timeoutMs: 60 * 60_000,
    env: process.env,
    onStderr: log,
  });
  if (code !== 0) {
    throw new Error(`${BUILD_SCRIPT} failed (exit ${code}):\n${tail(stderr, 40)}`);
  }
  const vars = parseVars(stdout);
  const need = (k: string): string => needVar(vars, k, BUILD_SCRIPT);
  return {
    kubeApiserver: need('KUBE_APISERVER'),
    etcd: need('ETCD'),
    kubeControllerManager: need('KUBE_CONTROLLER_MANAGER'),
    kubeScheduler: need('KUBE_SCHEDULER'),
    kubelet: need('KUBELET'),
    kubernetesVersion: need('KUBERNETES_VERSION'),
    etcdVersion: need('ETCD_VERSION'),
  };
}
