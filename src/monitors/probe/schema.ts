import { z } from 'zod';
import { type ConfigIssue, formatPath } from '../../config/errors.ts';
import type { ConfigKind } from '../../config/load.ts';
import {
  conditionFields,
  conditionType,
  deepFreeze,
  goDuration,
  healthFields,
  healthTag,
  isRecord,
} from '../../config/schema-kit.ts';
import type { HealthTag } from '../../core/types.ts';
import type { ConditionConfig } from '../../rules/config.ts';
import type { ProbeKind, ProbeSpec } from './kind.ts';
import { probeKinds } from './kinds.ts';

/** A validated probe-monitor config. Durations are milliseconds; disabled probes are dropped. */
export interface ProbeMonitorConfig extends HealthTag {
  readonly kind: 'probe';
  readonly file: string;
  readonly source: string;
  readonly metricsReporting: boolean;
  readonly splayMs: number;
  /** Declared conditions plus the defaults of probe kinds whose condition was not declared. */
  readonly conditions: readonly ConditionConfig[];
  readonly probes: readonly ProbeSpec[];
}

const condition = z.strictObject(conditionFields);

const top = z.strictObject({
  plugin: z.literal('probe'),
  source: z.string().min(1).default('probe-monitor'),
  metricsReporting: z.boolean().default(true),
  interval: goDuration.default(30_000),
  splay: goDuration.default(0),
  timeout: goDuration.default(5_000),
  conditions: z.array(condition).default([]),
  probes: z.array(z.record(z.string(), z.unknown())).min(1),
  ...healthFields,
});

/** Keys every probe entry has; everything else belongs to the probe kind's own schema. */
const common = z.object({
  kind: z.string(),
  name: z.string().min(1).optional(),
  enabled: z.boolean().default(true),
  type: z.enum(['temporary', 'permanent']).default('permanent'),
  condition: conditionType.optional(),
  reason: z.string().min(1).optional(),
  interval: goDuration.optional(),
  timeout: goDuration.optional(),
  failureThreshold: z.number().int().min(1).default(1),
  ...healthFields,
});

const COMMON_KEYS = new Set(Object.keys(common.shape));

type Top = z.infer<typeof top>;

interface Built {
  /** Position in the file's probes list, for issue paths. */
  readonly index: number;
  readonly spec: ProbeSpec;
  readonly enabled: boolean;
  readonly kind: ProbeKind;
}

class Issues {
  readonly list: ConfigIssue[] = [];
  private readonly file: string;

  constructor(file: string) {
    this.file = file;
  }

  add(path: readonly PropertyKey[], message: string): void {
    this.list.push({ file: this.file, path: formatPath(path), message });
  }

  zod(prefix: readonly PropertyKey[], error: z.ZodError): void {
    for (const issue of error.issues) {
      const at = [...prefix, ...issue.path];
      if (issue.code === 'unrecognized_keys')
        for (const key of issue.keys) this.add([...at, key], 'unknown key');
      else this.add(at, issue.message);
    }
  }
}

/** Validates a probe-monitor config: the file layout, each probe's own options, and the conditions they use. */
export function validateProbeMonitor(
  raw: unknown,
  file: string,
): { config?: ProbeMonitorConfig; issues: ConfigIssue[] } {
  const issues = new Issues(file);
  if (!isRecord(raw)) return { issues: [{ file, path: '', message: 'expected an object at the top level' }] };
  const parsed = top.safeParse(raw);
  if (!parsed.success) issues.zod([], parsed.error);
  const rawProbes = Array.isArray(raw.probes) ? raw.probes : [];
  const defaults = parsed.success ? parsed.data : { interval: 30_000, timeout: 5_000 };
  const built = rawProbes
    .map((p, i) => buildProbe(p, i, defaults, issues))
    .filter((b): b is Built => b !== undefined);
  checkNames(built, issues);
  if (!parsed.success) return { issues: issues.list };
  const conditions = resolveConditions(parsed.data, built, issues);
  if (issues.list.length > 0) return { issues: issues.list };
  const config: ProbeMonitorConfig = {
    kind: 'probe',
    file,
    source: parsed.data.source,
    metricsReporting: parsed.data.metricsReporting,
    splayMs: parsed.data.splay,
    ...healthTag(parsed.data),
    conditions,
    probes: built.filter((b) => b.enabled).map((b) => b.spec),
  };
  return { config: deepFreeze(config), issues: [] };
}

function buildProbe(
  raw: unknown,
  i: number,
  defaults: Pick<Top, 'interval' | 'timeout'>,
  issues: Issues,
): Built | undefined {
  if (!isRecord(raw)) return undefined;
  const kinds = probeKinds();
  const kind = kinds.find((k) => k.kind === raw.kind);
  if (!kind) {
    const known = kinds.map((k) => k.kind).join(', ');
    issues.add(['probes', i, 'kind'], `unknown probe kind ${JSON.stringify(raw.kind)}; one of: ${known}`);
    return undefined;
  }
  const head = common.safeParse(raw);
  const rest = Object.fromEntries(Object.entries(raw).filter(([k]) => !COMMON_KEYS.has(k)));
  const opts = kind.options.safeParse(rest);
  if (!head.success) issues.zod(['probes', i], head.error);
  if (!opts.success) issues.zod(['probes', i], opts.error);
  if (!head.success || !opts.success) return undefined;
  const h = head.data;
  const d = kind.defaults(opts.data);
  if (h.type === 'temporary' && h.condition !== undefined) {
    issues.add(['probes', i, 'condition'], 'a temporary probe reports events, not a condition');
  }
  const spec: ProbeSpec = {
    kind: kind.kind,
    name: h.name ?? kind.defaultName?.(opts.data) ?? kind.kind,
    type: h.type,
    condition: h.type === 'permanent' ? (h.condition ?? d.condition) : undefined,
    reason: h.reason ?? d.reason,
    intervalMs: h.interval ?? defaults.interval,
    timeoutMs: h.timeout ?? defaults.timeout,
    failureThreshold: h.failureThreshold,
    ...healthTag(h),
    options: opts.data,
  };
  checkTimes(spec, i, issues);
  return { index: i, spec, enabled: h.enabled, kind };
}

function checkTimes(spec: ProbeSpec, i: number, issues: Issues): void {
  if (spec.intervalMs <= 0) issues.add(['probes', i, 'interval'], 'must be greater than 0');
  if (spec.timeoutMs <= 0) issues.add(['probes', i, 'timeout'], 'must be greater than 0');
  const o = spec.options as { requestTimeout?: unknown; sntp?: { requestTimeout?: unknown } };
  const nested: [PropertyKey[], unknown][] = [
    [['requestTimeout'], o.requestTimeout],
    [['sntp', 'requestTimeout'], o.sntp?.requestTimeout],
  ];
  for (const [path, value] of nested) {
    if (typeof value === 'number' && value >= spec.timeoutMs) {
      issues.add(['probes', i, ...path], `must be shorter than the probe timeout (${spec.timeoutMs}ms)`);
    }
  }
}

/**
 * Every permanent probe's condition must be declared, as in NPD, except a kind's own default
 * condition, which is declared for it with the kind's healthy reason and message.
 */
function resolveConditions(t: Top, built: readonly Built[], issues: Issues): ConditionConfig[] {
  const declared = new Map<string, ConditionConfig>();
  t.conditions.forEach((c, i) => {
    if (declared.has(c.type))
      issues.add(['conditions', i, 'type'], `condition "${c.type}" is declared twice`);
    declared.set(c.type, c);
  });
  const out = [...declared.values()];
  const add = (c: ConditionConfig) => {
    if (declared.has(c.type)) return;
    declared.set(c.type, c);
    out.push(c);
  };
  // Only enabled probes declare defaults: a disabled probe must not publish a condition nobody sets.
  for (const b of built) {
    if (!b.enabled) continue;
    const d = b.kind.defaults(b.spec.options);
    for (const extra of b.kind.extraConditions?.(b.spec.options) ?? []) add(extra);
    if (b.spec.condition === d.condition)
      add({ type: d.condition, reason: d.healthyReason, message: d.healthyMessage });
  }
  for (const b of built) {
    const c = b.spec.condition;
    if (c !== undefined && c !== b.kind.defaults(b.spec.options).condition && !declared.has(c)) {
      issues.add(['probes', b.index, 'condition'], `condition "${c}" is not declared in conditions`);
    }
  }
  return out;
}

function checkNames(built: readonly Built[], issues: Issues): void {
  const seen = new Set<string>();
  built.forEach((b) => {
    if (seen.has(b.spec.name)) {
      issues.add(
        ['probes', b.index, 'name'],
        `probe name "${b.spec.name}" is used twice; give each probe a distinct name`,
      );
    }
    seen.add(b.spec.name);
  });
}

export const probeConfigKind: ConfigKind<ProbeMonitorConfig> = {
  kind: 'probe-monitor',
  plugins: ['probe'],
  validate: validateProbeMonitor,
};
