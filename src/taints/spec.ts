/**
 * `--taint-on-condition=<ConditionType>=<key>:<Effect>`: which taint the agent keeps on its Node while a
 * condition is True. Parsed and validated at start, so a typo fails the flag parse instead of every
 * later PATCH (a taint the API server rejects would otherwise be retried forever).
 */
import { isReservedConditionType } from '../core/reserved-conditions.ts';

export type TaintEffect = 'NoSchedule' | 'PreferNoSchedule' | 'NoExecute';

export interface TaintRule {
  readonly conditionType: string;
  readonly key: string;
  readonly effect: TaintEffect;
}

const EFFECTS: readonly TaintEffect[] = ['NoSchedule', 'PreferNoSchedule', 'NoExecute'];

/** apimachinery's IsQualifiedName: an optional DNS-1123 subdomain prefix, then a 63-character name. */
const NAME = /^[A-Za-z0-9]([-A-Za-z0-9_.]*[A-Za-z0-9])?$/;
const SUBDOMAIN = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$/;

function isEffect(value: string): value is TaintEffect {
  return (EFFECTS as readonly string[]).includes(value);
}

export function qualifiedNameError(key: string): string | undefined {
  const slash = key.indexOf('/');
  const prefix = slash < 0 ? undefined : key.slice(0, slash);
  const name = slash < 0 ? key : key.slice(slash + 1);
  if (prefix !== undefined && (prefix.length > 253 || !SUBDOMAIN.test(prefix)))
    return `prefix "${prefix}" is not a lowercase DNS subdomain`;
  if (name.length > 63 || !NAME.test(name))
    return `name "${name}" must be 1-63 alphanumerics, '-', '_' or '.', starting and ending alphanumeric`;
  return undefined;
}

/** The identity of a taint in the API: no two taints on a Node share key and effect. */
export function taintId(key: string, effect: string): string {
  return `${key}:${effect}`;
}

function parseOne(spec: string): TaintRule | string {
  const eq = spec.indexOf('=');
  const colon = spec.lastIndexOf(':');
  const usage = `--taint-on-condition "${spec}": expected <ConditionType>=<key>:<Effect>`;
  if (eq <= 0 || colon < eq) return usage;
  const conditionType = spec.slice(0, eq);
  const key = spec.slice(eq + 1, colon);
  const effect = spec.slice(colon + 1);
  if (/\s/.test(conditionType)) return `${usage} (the condition type has whitespace)`;
  // The rule sees only the conditions the agent writes, which never include the kubelet's types.
  if (isReservedConditionType(conditionType))
    return `--taint-on-condition "${spec}": ${conditionType} is the kubelet's condition, not the agent's`;
  if (!isEffect(effect)) return `--taint-on-condition "${spec}": effect must be one of ${EFFECTS.join(', ')}`;
  const keyError = qualifiedNameError(key);
  if (keyError) return `--taint-on-condition "${spec}": invalid taint key: ${keyError}`;
  return { conditionType, key, effect };
}

/**
 * One condition may drive several taints (e.g. NoSchedule and NoExecute), but one taint only one
 * condition: two owners of a key and effect would undo each other on every change.
 */
export function parseTaintRules(specs: readonly string[]): { rules: TaintRule[]; errors: string[] } {
  const rules: TaintRule[] = [];
  const errors: string[] = [];
  const owners = new Map<string, string>();
  for (const spec of specs) {
    const rule = parseOne(spec.trim());
    if (typeof rule === 'string') {
      errors.push(rule);
      continue;
    }
    const id = taintId(rule.key, rule.effect);
    const owner = owners.get(id);
    if (owner === rule.conditionType) continue;
    if (owner !== undefined) {
      errors.push(`--taint-on-condition: taint ${id} is claimed by both ${owner} and ${rule.conditionType}`);
      continue;
    }
    owners.set(id, rule.conditionType);
    rules.push(rule);
  }
  return { rules, errors };
}
