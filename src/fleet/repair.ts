import type { FleetNode, Problem } from './problems.ts';

/** One consumer's rule: it acts when `type` has had `status` for `afterMs` since lastTransitionTime. */
export interface RepairPolicy {
  /** Who acts, e.g. `karpenter (aws)` or `NodeHealthCheck/worker-health`. */
  readonly consumer: string;
  readonly type: string;
  readonly status: string;
  readonly afterMs: number;
}

export interface RepairDue {
  readonly consumer: string;
  /** Epoch ms at which the consumer acts (lastTransitionTime + its duration). */
  readonly dueAt: number;
}

const MINUTE = 60_000;
const karpenter = (provider: string, rows: readonly [string, string, number][]): RepairPolicy[] =>
  rows.map(([type, status, minutes]) => ({
    consumer: `karpenter (${provider})`,
    type,
    status,
    afterMs: minutes * MINUTE,
  }));

/**
 * Karpenter's repair policies are provider code, not configuration (RepairPolicies() of each
 * provider; ../shared/reference/repair-consumers.md §A1): aws/karpenter-provider-aws
 * pkg/cloudprovider/cloudprovider.go, and the GCP provider (cloudpilot-ai/karpenter-provider-gcp#266).
 * They apply only to nodes Karpenter launched, and only with its NodeRepair feature gate on.
 */
const KARPENTER: Readonly<Record<string, RepairPolicy[]>> = {
  'aws://': karpenter('aws', [
    ['Ready', 'False', 30],
    ['Ready', 'Unknown', 30],
    ['AcceleratedHardwareReady', 'False', 10],
    ['StorageReady', 'False', 30],
    ['NetworkingReady', 'False', 30],
    ['KernelReady', 'False', 30],
    ['ContainerRuntimeReady', 'False', 30],
  ]),
  'gce://': karpenter('gcp', [
    ['Ready', 'False', 10],
    ['Ready', 'Unknown', 10],
    ['KernelDeadlock', 'True', 5],
    ['ReadonlyFilesystem', 'True', 5],
    ['FrequentKubeletRestart', 'True', 30],
    ['FrequentContainerdRestart', 'True', 30],
  ]),
};

/** The Karpenter policies for a node it manages (label karpenter.sh/nodepool), by its provider. */
export function karpenterPolicies(node: FleetNode): RepairPolicy[] {
  if (node.labels['karpenter.sh/nodepool'] === undefined) return [];
  const prefix = Object.keys(KARPENTER).find((p) => node.providerID.startsWith(p));
  return prefix ? (KARPENTER[prefix] as RepairPolicy[]) : [];
}

/** When each policy matching the problem (type and status exactly, as all three consumers do) acts. */
export function repairsDue(problem: Problem, policies: readonly RepairPolicy[]): RepairDue[] {
  if (problem.since === undefined) return [];
  const since = problem.since;
  return policies
    .filter((p) => p.type === problem.type && p.status === problem.status)
    .map((p) => ({ consumer: p.consumer, dueAt: since + p.afterMs }))
    .sort((a, b) => a.dueAt - b.dueAt);
}
