import { problemWhen } from '../core/polarity.ts';

/** A Node as the fleet view reads it. */
export interface FleetNode {
  readonly name: string;
  readonly labels: Readonly<Record<string, string>>;
  readonly annotations: Readonly<Record<string, string>>;
  readonly providerID: string;
  readonly conditions: readonly NodeCondition[];
}

export interface NodeCondition {
  readonly type: string;
  readonly status: string;
  readonly reason: string;
  readonly message: string;
  /** Epoch ms; undefined when the Node has none or it does not parse. */
  readonly since: number | undefined;
}

/** A condition that means a problem, or that its writer could not decide (Unknown). */
export interface Problem extends NodeCondition {
  /** The status that means a problem for this type: True for NPD's types, False for `*Ready`. */
  readonly problemWhen: 'True' | 'False';
}

/**
 * The node's problems in one polarity. The agent's own types follow core/polarity.ts (NPD's types are
 * problems when True, the subsystem `*Ready` types when False); the kubelet's `Ready` is a problem
 * when not True, its pressure types when True. Unknown is listed under its own status, not hidden:
 * NodeHealthCheck's default acts on `Ready=Unknown`, and a check that cannot run is worth seeing.
 */
export function nodeProblems(node: FleetNode): Problem[] {
  const out: Problem[] = [];
  for (const c of node.conditions) {
    const when = c.type === 'Ready' ? 'False' : problemWhen(c.type);
    if (c.status === when || c.status === 'Unknown') out.push({ ...c, problemWhen: when });
  }
  return out;
}
