import type { Condition } from './types.ts';

/**
 * `next` with `prev`'s transition time when the status did not change. Repair controllers
 * (Karpenter node repair, NodeHealthCheck, Cluster API's MachineHealthCheck) time a repair from
 * lastTransitionTime, so a new reason or message for a condition that stays True must not restart
 * their clock (the EKS agent fixed the same bug for Karpenter: aws/eks-node-monitoring-agent#52).
 * NPD moves it; docs/migration-from-npd.md says why we do not.
 */
export function keepTransition(prev: Condition | undefined, next: Condition): Condition {
  if (!prev || prev.status !== next.status || prev.transition === next.transition) return next;
  return { ...next, transition: prev.transition };
}
