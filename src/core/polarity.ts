import type { ConditionStatus, Subsystem } from './types.ts';

/**
 * The condition type of each subsystem: the names the EKS node monitoring agent and Karpenter use.
 * They live here, beside their polarity, because these are the only types the agent writes healthy
 * when True.
 */
export const SUBSYSTEM_CONDITIONS: Readonly<Record<Subsystem, string>> = {
  kernel: 'KernelReady',
  networking: 'NetworkingReady',
  storage: 'StorageReady',
  'container-runtime': 'ContainerRuntimeReady',
  'accelerated-hardware': 'AcceleratedHardwareReady',
};

/** The status that means a problem: a condition's polarity. */
export type ProblemWhen = 'True' | 'False';

const HEALTHY_WHEN_TRUE: ReadonlySet<string> = new Set(Object.values(SUBSYSTEM_CONDITIONS));

/**
 * NPD's types (`KernelDeadlock`, every type a monitor config declares) mean a problem when True; the
 * subsystem types (`KernelReady`, ...) mean a problem when False, as Karpenter's AWS repair policies
 * read them (docs/conditions.md). The one place the agent decides this, for /metrics and /conditions.
 */
export function problemWhen(type: string): ProblemWhen {
  return HEALTHY_WHEN_TRUE.has(type) ? 'False' : 'True';
}

/**
 * Whether a condition means a problem now. `Unknown` (a check that could not decide) is not one: it is
 * neither confirmed bad nor healthy, and the callers show it under its own status instead of hiding it.
 */
export function isProblem(c: { readonly type: string; readonly status: ConditionStatus }): boolean {
  return c.status === problemWhen(c.type);
}
