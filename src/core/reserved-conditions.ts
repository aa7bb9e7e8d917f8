/**
 * Node condition types that other components own and that no monitor config may declare (issue 39).
 * Each owner rewrites its type on every status update, so the agent's value would flap against it;
 * a cleanup of types a config dropped would delete the owner's condition; and the node lifecycle
 * controller turns exactly these five types, and no other, into `node.kubernetes.io/*` taints
 * (kubernetes pkg/controller/nodelifecycle/node_lifecycle_controller.go,
 * nodeConditionToTaintKeyStatusMap), so a rule claiming one would cordon the node, or for `Ready`
 * evict its pods. NPD accepts them (docs/migration-from-npd.md).
 *
 * Type names compare exactly, as the API server does: `ready` is a different (allowed) type.
 */
const OWNERS: ReadonlyMap<string, string> = new Map([
  // kubelet pkg/kubelet/nodestatus/setters.go ReadyCondition; the node lifecycle controller sets it
  // Unknown when the kubelet stops posting (tryUpdateNodeHealth). Taints not-ready and unreachable.
  ['Ready', 'the kubelet (and the node lifecycle controller when the kubelet stops posting status)'],
  // setters.go MemoryPressureCondition, from the kubelet's eviction manager. Taint memory-pressure.
  ['MemoryPressure', "the kubelet's eviction manager"],
  // setters.go DiskPressureCondition, from the eviction manager. Taint disk-pressure.
  ['DiskPressure', "the kubelet's eviction manager"],
  // setters.go PIDPressureCondition, from the eviction manager. Taint pid-pressure.
  ['PIDPressure', "the kubelet's eviction manager"],
  // k8s.io/cloud-provider controllers/route/route_controller.go (reason RouteCreated), the cloud
  // CIDR allocator (pkg/controller/nodeipam/ipam/cloud_cidr_allocator.go) or the CNI plugin.
  // Taint network-unavailable.
  ['NetworkUnavailable', 'the route controller or the CNI plugin'],
]);

/** The refused types, in the order the kubelet lists its conditions. */
export const RESERVED_CONDITION_TYPES: readonly string[] = Object.freeze([...OWNERS.keys()]);

export function isReservedConditionType(type: string): boolean {
  return OWNERS.has(type);
}

/** Why a config may not declare `type`; undefined for a type the agent may own. */
export function reservedConditionProblem(type: string): string | undefined {
  const owner = OWNERS.get(type);
  if (owner === undefined) return undefined;
  return (
    `condition type "${type}" belongs to ${owner}, and the node lifecycle controller taints the ` +
    'node on it; the agent never writes or deletes it: choose a type of your own (e.g. KernelDeadlock)'
  );
}
