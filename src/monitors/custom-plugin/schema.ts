import { isAbsolute, resolve } from 'node:path';
import { z } from 'zod';
import type { ConfigIssue } from '../../config/errors.ts';
import { formatPath } from '../../config/errors.ts';
import type { ConfigKind } from '../../config/load.ts';
import {
  conditionFields,
  declaredConditions,
  deepFreeze,
  goDuration,
  healthFields,
  healthTag,
  isRecord,
  refuseReserved,
  toConfigIssues,
} from '../../config/schema-kit.ts';
import type { HealthTag } from '../../core/types.ts';
import type { ConditionConfig, RuleType } from '../../rules/config.ts';

export interface PluginRuleConfig extends HealthTag {
  readonly type: RuleType;
  readonly condition?: string | undefined;
  readonly reason: string;
  /** The path as written in the config; NPD quotes it in messages and logs. */
  readonly path: string;
  /** What is executed: `path` resolved against the agent's working directory (see resolveCommand). */
  readonly command: string;
  readonly args: readonly string[];
  /** Effective per-run timeout: the rule's own, else the global one (validation keeps it <= global). */
  readonly timeoutMs: number;
  /** Effective interval: the rule's own, else the global one. Equal intervals share a timer group. */
  readonly invokeIntervalMs: number;
}

export interface PluginMonitorConfig extends HealthTag {
  readonly kind: 'custom-plugin';
  readonly file: string;
  readonly plugin: 'custom';
  readonly source: string;
  readonly metricsReporting: boolean;
  readonly invokeIntervalMs: number;
  readonly timeoutMs: number;
  /** Bytes of trimmed stdout kept as the message; at most 4096 are ever read, as in NPD. */
  readonly maxOutputLength: number;
  readonly concurrency: number;
  /** NPD's enable_message_change_based_condition_update. */
  readonly messageChangeUpdates: boolean;
  readonly skipInitialStatus: boolean;
  /** Ours, not NPD's (issue #412): each timer tick is delayed by a random fraction of this. 0 = off. */
  readonly splayMs: number;
  readonly conditions: readonly ConditionConfig[];
  readonly rules: readonly PluginRuleConfig[];
}

const positiveDuration = goDuration.refine((ms) => ms > 0, 'must be greater than 0');

const pluginConfig = z.strictObject({
  invoke_interval: positiveDuration.default(30_000),
  timeout: positiveDuration.default(5_000),
  max_output_length: z.number().int().min(1).default(80),
  concurrency: z.number().int().min(1).default(3),
  enable_message_change_based_condition_update: z.boolean().default(false),
  skip_initial_status: z.boolean().default(false),
  splay: goDuration.default(0),
});

const condition = z.strictObject(conditionFields);

const rule = z.strictObject({
  type: z.enum(['temporary', 'permanent']),
  condition: z.string().superRefine(refuseReserved).optional(),
  reason: z.string().min(1),
  path: z.string().min(1),
  args: z.array(z.string()).default([]),
  timeout: positiveDuration.optional(),
  invoke_interval: positiveDuration.optional(),
  ...healthFields,
});

const pluginMonitor = z.strictObject({
  plugin: z.literal('custom'),
  pluginConfig: pluginConfig.prefault({}),
  source: z.string().default(''),
  metricsReporting: z.boolean().default(true),
  conditions: z.array(condition).default([]),
  rules: z.array(rule).default([]),
  ...healthFields,
});

/**
 * Like NPD (and Go's exec.Command), a path with a slash that is not absolute is relative to the agent's
 * working directory (`/` in NPD's image, so `./config/plugin/x.sh` is `/config/plugin/x.sh`), not to the
 * config file; a bare name is looked up in PATH when spawned. Resolving here pins the meaning at load.
 */
export function resolveCommand(path: string, cwd: string): string {
  if (isAbsolute(path) || !path.includes('/')) return path;
  return resolve(cwd, path);
}

/**
 * Validates a custom-plugin-monitor config. Unlike NPD, a rule whose executable does not exist is not a
 * config error: NPD's own shipped configs name helpers that only some images contain, so a missing
 * executable is a runtime failure (Unknown, a log line and npd_plugin_errors_total{reason="start"}).
 */
export function validatePluginMonitor(
  raw: unknown,
  file: string,
  cwd: string = process.cwd(),
): { config?: PluginMonitorConfig; issues: ConfigIssue[] } {
  const parsed = pluginMonitor.safeParse(raw);
  const issues = [...(parsed.success ? [] : toConfigIssues(file, parsed.error)), ...crossCheck(raw, file)];
  if (!parsed.success || issues.length > 0) return { issues };
  const v = parsed.data;
  const pc = v.pluginConfig;
  const config: PluginMonitorConfig = {
    kind: 'custom-plugin',
    file,
    plugin: 'custom',
    source: v.source,
    metricsReporting: v.metricsReporting,
    invokeIntervalMs: pc.invoke_interval,
    timeoutMs: pc.timeout,
    maxOutputLength: pc.max_output_length,
    concurrency: pc.concurrency,
    messageChangeUpdates: pc.enable_message_change_based_condition_update,
    skipInitialStatus: pc.skip_initial_status,
    splayMs: pc.splay,
    ...healthTag(v),
    conditions: v.conditions,
    rules: v.rules.map((r) => ({
      type: r.type,
      condition: r.condition,
      reason: r.reason,
      path: r.path,
      command: resolveCommand(r.path, cwd),
      args: r.args,
      timeoutMs: r.timeout ?? pc.timeout,
      invokeIntervalMs: r.invoke_interval ?? pc.invoke_interval,
      ...healthTag(r),
    })),
  };
  return { config: deepFreeze(config), issues: [] };
}

type Add = (path: PropertyKey[], message: string) => void;

/** Checks that span fields; they run on the raw input so they report alongside type errors. */
function crossCheck(raw: unknown, file: string): ConfigIssue[] {
  if (!isRecord(raw)) return []; // The schema already says what the top level should be.
  const issues: ConfigIssue[] = [];
  const add: Add = (path, message) => issues.push({ file, path: formatPath(path), message });
  const declared = declaredConditions(raw, add);
  const globalText = isRecord(raw.pluginConfig) ? raw.pluginConfig.timeout : undefined;
  const global = { ms: durationOf(globalText ?? '5s'), text: String(globalText ?? '5s (default)') };
  const rules = Array.isArray(raw.rules) ? raw.rules : [];
  rules.forEach((r, i) => {
    if (isRecord(r)) checkRule(r, i, declared, global, add);
  });
  return issues;
}

function checkRule(
  r: Record<string, unknown>,
  i: number,
  declared: Set<string>,
  global: { readonly ms: number | undefined; readonly text: string },
  add: Add,
): void {
  if (r.type === 'permanent') {
    if (typeof r.condition !== 'string' || r.condition === '') {
      add(['rules', i, 'condition'], 'a permanent rule needs a condition');
    } else if (!declared.has(r.condition)) {
      add(['rules', i, 'condition'], `condition "${r.condition}" is not declared in conditions`);
    }
  }
  const timeout = durationOf(r.timeout);
  if (timeout !== undefined && global.ms !== undefined && timeout > global.ms) {
    add(['rules', i, 'timeout'], `${String(r.timeout)} exceeds pluginConfig.timeout ${global.text}`);
  }
}

/** A duration for cross-checks; undefined when absent or malformed (the schema reports those). */
function durationOf(value: unknown): number | undefined {
  if (value === undefined) return undefined;
  const parsed = goDuration.safeParse(value);
  return parsed.success ? parsed.data : undefined;
}

export const customPluginConfigKind: ConfigKind<PluginMonitorConfig> = {
  kind: 'custom-plugin-monitor',
  plugins: ['custom'],
  validate: (raw, file) => validatePluginMonitor(raw, file),
};
