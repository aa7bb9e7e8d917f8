import { z } from 'zod';
import { reservedConditionProblem } from '../core/reserved-conditions.ts';
import { type HealthTag, IMPACTS, SUBSYSTEMS } from '../core/types.ts';
import { parseGoDuration } from '../gocompat/duration.ts';
import type { ConfigIssue } from './errors.ts';
import { formatPath } from './errors.ts';

/** A Go duration string ("5m", "1h30m", "0"), normalised to milliseconds. */
export const goDuration = z.string().transform((text, ctx) => {
  const ms = parseGoDuration(text);
  if (ms instanceof Error) {
    ctx.addIssue({ code: 'custom', message: ms.message });
    return z.NEVER;
  }
  if (ms < 0) {
    ctx.addIssue({ code: 'custom', message: `duration "${text}" must not be negative` });
    return z.NEVER;
  }
  return ms;
});

/** Optional subsystem and impact of a file (its default) or of one rule or probe (docs/rules.md). */
export const healthFields = {
  subsystem: z.enum(SUBSYSTEMS).optional(),
  impact: z.enum(IMPACTS).optional(),
};

/** The declared subsystem and impact, without keys for the undeclared ones. */
export function healthTag(v: HealthTag): HealthTag {
  return {
    ...(v.subsystem !== undefined ? { subsystem: v.subsystem } : {}),
    ...(v.impact !== undefined ? { impact: v.impact } : {}),
  };
}

/** Refuses a condition type that the kubelet or a controller owns (core/reserved-conditions.ts). */
export function refuseReserved(type: string, ctx: z.RefinementCtx): void {
  const problem = reservedConditionProblem(type);
  if (problem !== undefined) ctx.addIssue({ code: 'custom', message: problem });
}

/** A condition type a config names: not empty, and not one another component owns. */
export const conditionType = z.string().min(1).superRefine(refuseReserved);

/** The fields every monitor kind's `conditions[]` entries share. */
export const conditionFields = {
  type: conditionType,
  reason: z.string().min(1),
  message: z.string(),
  /** Another config file may report this type too; the worst status wins. */
  aggregate: z.boolean().optional(),
};

/** Converts zod issues into file-and-field issues, spelling unknown keys out one by one. */
export function toConfigIssues(file: string, error: z.ZodError): ConfigIssue[] {
  const out: ConfigIssue[] = [];
  for (const issue of error.issues) {
    if (issue.code === 'unrecognized_keys') {
      for (const key of issue.keys)
        out.push({ file, path: formatPath([...issue.path, key]), message: 'unknown key' });
    } else {
      out.push({ file, path: formatPath(issue.path), message: issue.message });
    }
  }
  return out;
}

/** Recursively freezes a validated config so nothing downstream can mutate it. */
export function deepFreeze<T>(value: T): T {
  if (value && typeof value === 'object' && !Object.isFrozen(value)) {
    Object.freeze(value);
    for (const v of Object.values(value)) deepFreeze(v);
  }
  return value;
}

export function isRecord(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

/** Reports a problem at a path inside the config being checked. */
export type AddIssue = (path: PropertyKey[], message: string) => void;

/**
 * The condition types a raw config declares (its `conditions[].type`), reporting each type declared
 * a second time at that place. Runs on raw input, so it reports alongside the schema's type errors.
 */
export function declaredConditions(raw: Record<string, unknown>, add: AddIssue): Set<string> {
  const declared = new Set<string>();
  const conditions = Array.isArray(raw.conditions) ? raw.conditions : [];
  conditions.forEach((c, i) => {
    if (!isRecord(c) || typeof c.type !== 'string') return;
    if (declared.has(c.type)) add(['conditions', i, 'type'], `condition "${c.type}" is declared twice`);
    declared.add(c.type);
  });
  return declared;
}
