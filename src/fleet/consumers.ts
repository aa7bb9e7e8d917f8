import { parseGoDuration } from '../gocompat/duration.ts';
import { type Json, list, obj, str } from './json.ts';
import type { FleetNode } from './problems.ts';
import type { RepairPolicy } from './repair.ts';

/** A repair controller configured in the cluster: its policies for one node (none if not selected). */
export type Consumer = (node: FleetNode) => RepairPolicy[];

/** NodeHealthCheck's kubebuilder default when spec.unhealthyConditions is absent (Ready 300 s). */
const NHC_DEFAULT = [
  { type: 'Ready', status: 'False', duration: '300s' },
  { type: 'Ready', status: 'Unknown', duration: '300s' },
];

/**
 * medik8s NodeHealthCheck (remediation.medik8s.io/v1alpha1): spec.selector picks Nodes, and each of
 * spec.unhealthyConditions acts `duration` after lastTransitionTime. Paused ones (pauseRequests) are
 * listed with "(paused)" so nobody expects them to act.
 */
export function nodeHealthCheck(raw: Json): Consumer {
  const meta = obj(raw.metadata);
  const spec = obj(raw.spec);
  const paused = Array.isArray(spec.pauseRequests) && spec.pauseRequests.length > 0;
  const consumer = `NodeHealthCheck/${str(meta.name)}${paused ? ' (paused)' : ''}`;
  const given = Array.isArray(spec.unhealthyConditions) ? list(spec.unhealthyConditions) : NHC_DEFAULT;
  const policies = given.flatMap((c) => {
    const ms = parseGoDuration(str(c.duration));
    return ms instanceof Error ? [] : [{ consumer, type: str(c.type), status: str(c.status), afterMs: ms }];
  });
  const selector = obj(spec.selector);
  return (node) => (matchesSelector(selector, node.labels) ? policies : []);
}

/**
 * Cluster API MachineHealthCheck v1beta2: spec.checks.unhealthyNodeConditions with timeoutSeconds. It
 * selects Machines, which a Node does not show; CAPI annotates a workload cluster's Nodes with their
 * cluster's name and namespace, so the MHC applies to the Nodes of its cluster (assumed selected).
 */
export function machineHealthCheck(raw: Json): Consumer {
  const meta = obj(raw.metadata);
  const spec = obj(raw.spec);
  const consumer = `MachineHealthCheck/${str(meta.namespace)}/${str(meta.name)}`;
  const policies = list(obj(spec.checks).unhealthyNodeConditions).flatMap((c) =>
    typeof c.timeoutSeconds === 'number'
      ? [{ consumer, type: str(c.type), status: str(c.status), afterMs: c.timeoutSeconds * 1000 }]
      : [],
  );
  return (node) =>
    node.annotations['cluster.x-k8s.io/cluster-name'] === str(spec.clusterName) &&
    node.annotations['cluster.x-k8s.io/cluster-namespace'] === str(meta.namespace)
      ? policies
      : [];
}

/** metav1.LabelSelector: matchLabels and matchExpressions (In, NotIn, Exists, DoesNotExist), all ANDed. */
export function matchesSelector(selector: Json, labels: Readonly<Record<string, string>>): boolean {
  for (const [k, v] of Object.entries(obj(selector.matchLabels))) if (labels[k] !== v) return false;
  return list(selector.matchExpressions).every((e) => {
    const value = labels[str(e.key)];
    const values = Array.isArray(e.values) ? e.values.map(str) : [];
    switch (str(e.operator)) {
      case 'In':
        return value !== undefined && values.includes(value);
      case 'NotIn':
        return value === undefined || !values.includes(value);
      case 'Exists':
        return value !== undefined;
      case 'DoesNotExist':
        return value === undefined;
      default:
        return false;
    }
  });
}
