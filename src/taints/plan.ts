import type { ConditionStatus } from '../core/types.ts';
import type { JsonObject, NodeSnapshot } from '../kube/client.ts';
import { formatRfc3339Seconds } from '../kube/time.ts';
import { type TaintRule, taintId } from './spec.ts';

/**
 * Records which taints the agent added (comma-separated `key:Effect`, sorted). Taint identity is key
 * and effect, so the annotation is what tells our taint from an identical-looking one an admin or
 * another controller added; it survives agent restarts, which in-memory state would not.
 */
export const TAINTS_ANNOTATION = 'node-problem-detector.io/taints';
/** A constant value lets a toleration match with operator Equal; the reason is on the condition. */
export const TAINT_VALUE = 'true';

export interface JsonPatchOp {
  readonly op: 'test' | 'add' | 'remove';
  readonly path: string;
  readonly value?: unknown;
}

export interface TaintPlan {
  readonly added: readonly TaintRule[];
  readonly removed: readonly TaintRule[];
  /** Undefined when the Node already matches: nothing is sent. */
  readonly patch: readonly JsonPatchOp[] | undefined;
}

/** RFC 6901: `/` in the annotation key must be escaped in a JSON pointer. */
function pointer(...tokens: string[]): string {
  return tokens.map((t) => `/${t.replaceAll('~', '~0').replaceAll('/', '~1')}`).join('');
}

export function parseOwned(annotation: string | undefined): Set<string> {
  return new Set((annotation ?? '').split(',').flatMap((s) => (s.trim() === '' ? [] : [s.trim()])));
}

function newTaint(rule: TaintRule, now: number): JsonObject {
  const taint: JsonObject = { key: rule.key, value: TAINT_VALUE, effect: rule.effect };
  // The API documents timeAdded for NoExecute taints only (tolerationSeconds count from it).
  if (rule.effect === 'NoExecute') taint.timeAdded = formatRfc3339Seconds(now);
  return taint;
}

/**
 * What the Node's taints should be for the known condition statuses. A condition never reported yet
 * is left alone: no news is not "False". A taint counts as ours only if the annotation lists it and it
 * still has our value; anything else with the same key and effect is foreign and never touched (a
 * foreign one also satisfies a True condition, since a second with the same key and effect is invalid).
 */
export function planTaints(
  rules: readonly TaintRule[],
  statuses: ReadonlyMap<string, ConditionStatus>,
  node: NodeSnapshot,
  now: number,
): TaintPlan {
  const owned = parseOwned(node.annotations[TAINTS_ANNOTATION]);
  const taints = [...node.taints];
  const added: TaintRule[] = [];
  const removed: TaintRule[] = [];
  for (const rule of rules) {
    const status = statuses.get(rule.conditionType);
    if (status === undefined) continue;
    const id = taintId(rule.key, rule.effect);
    const at = taints.findIndex((t) => t.key === rule.key && t.effect === rule.effect);
    const ours = at >= 0 && owned.has(id) && taints[at]?.value === TAINT_VALUE;
    if (status === 'True' && at < 0) {
      taints.push(newTaint(rule, now));
      owned.add(id);
      added.push(rule);
    } else if (status !== 'True' && ours) {
      taints.splice(at, 1);
      owned.delete(id);
      removed.push(rule);
    } else if (!ours) {
      owned.delete(id);
    }
  }
  const annotation = [...owned].sort().join(',');
  const annotationChanged = annotation !== (node.annotations[TAINTS_ANNOTATION] ?? '');
  const taintsChanged = added.length > 0 || removed.length > 0;
  if (!taintsChanged && !annotationChanged) return { added, removed, patch: undefined };
  return { added, removed, patch: jsonPatch(node, taintsChanged ? taints : undefined, annotation) };
}

/**
 * spec.taints has no strategic-merge key, so the whole list is written, guarded by `test` ops on the
 * list and the annotation as read: if anyone changed either meanwhile the server answers 422 and the
 * caller re-reads. The API server's JSON patch treats `test` with null as "absent" (omitted empty
 * lists and maps), which RFC 6902 leaves open.
 */
function jsonPatch(node: NodeSnapshot, taints: JsonObject[] | undefined, annotation: string): JsonPatchOp[] {
  const current = node.annotations[TAINTS_ANNOTATION];
  const ops: JsonPatchOp[] = [
    { op: 'test', path: '/spec/taints', value: node.taints.length > 0 ? node.taints : null },
  ];
  if (Object.keys(node.annotations).length === 0) {
    ops.push({ op: 'test', path: '/metadata/annotations', value: null });
    if (annotation !== '')
      ops.push({ op: 'add', path: '/metadata/annotations', value: { [TAINTS_ANNOTATION]: annotation } });
  } else {
    const path = pointer('metadata', 'annotations', TAINTS_ANNOTATION);
    ops.push({ op: 'test', path, value: current ?? null });
    if (annotation !== '' && annotation !== current) ops.push({ op: 'add', path, value: annotation });
    if (annotation === '' && current !== undefined) ops.push({ op: 'remove', path });
  }
  if (taints) ops.push({ op: 'add', path: '/spec/taints', value: taints });
  return ops;
}
