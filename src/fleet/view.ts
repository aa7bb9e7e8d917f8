import { type NodeCondition, nodeProblems, type Problem } from './problems.ts';
import type { FleetState, NodeEvent } from './read.ts';
import { karpenterPolicies, type RepairDue, repairsDue } from './repair.ts';

/** One node's problems with when each repair controller acts, and the agent's events, newest last. */
export interface NodeReport {
  readonly node: string;
  /** Every condition of the Node, problems or not, for the timeline. */
  readonly conditions: readonly NodeCondition[];
  readonly problems: readonly (Problem & { readonly repairs: readonly RepairDue[] })[];
  readonly events: readonly NodeEvent[];
}

/** Joins nodes, their events and the configured consumers into per-node reports (every node, sorted). */
export function reports(state: FleetState): NodeReport[] {
  const byNode = new Map<string, NodeEvent[]>();
  for (const e of state.events) byNode.set(e.node, [...(byNode.get(e.node) ?? []), e]);
  return [...state.nodes]
    .sort((a, b) => a.name.localeCompare(b.name))
    .map((node) => {
      const policies = [...karpenterPolicies(node), ...state.consumers.flatMap((c) => c(node))];
      const problems = nodeProblems(node).map((p) => ({ ...p, repairs: repairsDue(p, policies) }));
      const events = (byNode.get(node.name) ?? []).sort((a, b) => a.at - b.at);
      return { node: node.name, conditions: node.conditions, problems, events };
    });
}
