import type { ConfigIssue } from '../config/errors.ts';
import type { LoadedConfig } from '../config/load.ts';
import { reservedConditionProblem } from '../core/reserved-conditions.ts';

interface DeclaredCondition {
  readonly type: string;
  readonly aggregate?: boolean | undefined;
}

/** The condition types each config declares; every monitor kind keeps them in `conditions`. */
export function declaredConditions(loaded: LoadedConfig): readonly DeclaredCondition[] {
  const conditions = (loaded.config as { conditions?: readonly DeclaredCondition[] }).conditions;
  return conditions ?? [];
}

/**
 * Two config files owning one condition type would overwrite each other (NPD #566, #664), so that is a
 * config error unless every declaration opts in to aggregation. Returns the aggregated types.
 */
export function checkOwners(configs: readonly LoadedConfig[]): {
  issues: ConfigIssue[];
  aggregated: Set<string>;
} {
  const owners = new Map<string, { file: string; index: number; aggregate: boolean }[]>();
  for (const loaded of configs) {
    declaredConditions(loaded).forEach((c, index) => {
      const list = owners.get(c.type) ?? [];
      list.push({ file: loaded.file, index, aggregate: c.aggregate === true });
      owners.set(c.type, list);
    });
  }
  const issues = reservedTypes(configs);
  const aggregated = new Set<string>();
  for (const [type, list] of owners) {
    if (list.length < 2) continue;
    if (list.every((o) => o.aggregate)) {
      aggregated.add(type);
      continue;
    }
    const others = list.map((o) => o.file).join(', ');
    for (const o of list.filter((x) => !x.aggregate)) {
      issues.push({
        file: o.file,
        path: `conditions[${o.index}].type`,
        message: `condition "${type}" is also declared by ${others}; set aggregate: true on every declaration to combine them`,
      });
    }
  }
  return { issues, aggregated };
}

/**
 * Every kind's schema refuses the kubelet's types at the field that names them; this checks what a
 * kind resolved (a probe kind's default and extra conditions included), so a kind that forgets to
 * cannot let one through, at start-up or on reload.
 */
function reservedTypes(configs: readonly LoadedConfig[]): ConfigIssue[] {
  return configs.flatMap((loaded) =>
    declaredConditions(loaded).flatMap((c) => {
      const message = reservedConditionProblem(c.type);
      return message === undefined ? [] : [{ file: loaded.file, path: 'conditions', message }];
    }),
  );
}

export function allConditionTypes(configs: readonly LoadedConfig[]): string[] {
  return [...new Set(configs.flatMap((c) => declaredConditions(c).map((d) => d.type)))];
}
