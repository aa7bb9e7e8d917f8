import type { Clock } from '../core/clock.ts';
import type { Logger } from '../core/logger.ts';
import { resolveConnection } from '../kube/config.ts';
import type { ApiConnection } from '../kube/connection.ts';
import type { Options } from './options.ts';

/** The cluster to report to, if --enable-k8s-exporter is on and a config is found; warns what is off without one. */
export async function findCluster(
  options: Options,
  clock: Clock,
  logger: Logger,
): Promise<ApiConnection | undefined> {
  const connection = options.enableK8sExporter
    ? await resolveConnection({
        apiserverOverride: options.apiserverOverride,
        kubeconfig: options.kubeconfig,
        clock,
        logger,
      })
    : undefined;
  if (!connection) {
    if (options.enableK8sExporter)
      logger.warn('no cluster config found (in-cluster, --kubeconfig, KUBECONFIG); running standalone');
    if (options.taintOnCondition.length > 0)
      logger.warn('--taint-on-condition needs a cluster; no taints will be set');
    if (options.diagnostics) logger.warn('--diagnostics needs a cluster; no requests will be served');
  }
  return connection;
}
