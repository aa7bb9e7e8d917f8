import { z } from 'zod';
import type { ConfigIssue } from '../../config/errors.ts';
import type { ConfigKind } from '../../config/load.ts';
import {
  conditionFields,
  deepFreeze,
  goDuration,
  healthFields,
  healthTag,
  isRecord,
  toConfigIssues,
} from '../../config/schema-kit.ts';
import type { HealthTag } from '../../core/types.ts';
import type { ConditionConfig } from '../../rules/config.ts';
import type { GpuCheck } from './check.ts';
import { classifyXid, isFatalXid, ownEventCodes } from './xid-catalog.ts';

/**
 * Checks that are not polled but fed by NVML's event wait: `xid` (XidCriticalError, GpuUnavailable,
 * GpuRecoveryAction) and `sbe-storm` (SingleBitEccErrorStorm). Each takes `enabled` only.
 */
export const EVENT_CHECKS = ['xid', 'sbe-storm'] as const;
export type EventCheck = (typeof EVENT_CHECKS)[number];

/** GPUUnhealthy's reason when NVML answers a call with GPU_IS_LOST (rules/gpu.yaml's kernel-log name). */
export const FALLEN_OFF_BUS = 'GPUFallenOffBus';
/** The SBE storm event's reason: NVML's own name for it (nvmlEventTypeSingleBitEccErrorStorm). */
export const SBE_STORM = 'SingleBitEccErrorStorm';

/** A rule as the subsystem table reads it (conditions/subsystem-table.ts). */
export interface GpuRule extends HealthTag {
  readonly type: 'temporary' | 'permanent';
  readonly condition?: string;
  readonly reason: string;
  readonly heldBy?: string;
}

export interface GpuCheckConfig {
  readonly enabled: boolean;
  /** The check's own options, validated and defaulted by its schema. */
  readonly options: unknown;
}

/** A validated nvml config. Durations are milliseconds. */
export interface GpuMonitorConfig extends HealthTag {
  readonly kind: 'nvml';
  readonly file: string;
  readonly source: string;
  readonly library: string;
  readonly intervalMs: number;
  readonly expectedCount: number | undefined;
  readonly metricsReporting: boolean;
  /** Exactly one: the condition the monitor sets (GPUUnhealthy by default). */
  readonly conditions: readonly ConditionConfig[];
  /** Every check by name (polled and event-fed), enabled or not. */
  readonly checks: Readonly<Record<string, GpuCheckConfig>>;
  /** What the monitor reports, for the subsystem conditions (generated, not written in the file). */
  readonly rules: readonly GpuRule[];
}

export const DEFAULT_CONDITION: ConditionConfig = {
  type: 'GPUUnhealthy',
  reason: 'GPUIsHealthy',
  message: 'no GPU error that needs a GPU reset, a reboot or a replacement',
  aggregate: true,
};

const top = z.strictObject({
  plugin: z.literal('nvml'),
  source: z.string().min(1).default('gpu-nvml-monitor'),
  /** The soname the NVIDIA container runtime mounts (gpu.md section 0 and 5). */
  library: z.string().min(1).default('libnvidia-ml.so.1'),
  /**
   * 60 s: DCGM's health watches judge over the last minute (NVIDIA/DCGM modules/health/
   * DcgmHealthWatch.cpp: PCIe replays, thermal and power violations), the EKS agent polls every 5 min
   * (monitors/nvidia/monitor.go); Xids arrive at once through the event wait whatever this is.
   */
  interval: goDuration.default(60_000),
  /** GPUs the node must have (its instance type's count); NVML seeing fewer is a mismatch. */
  expectedCount: z.number().int().min(1).optional(),
  metricsReporting: z.boolean().default(true),
  conditions: z.array(z.strictObject(conditionFields)).max(1).default([DEFAULT_CONDITION]),
  checks: z.record(z.string(), z.unknown()).default({}),
  ...healthFields,
});

const enabledOnly = z.strictObject({ enabled: z.boolean().default(true) });

/**
 * Validates an nvml config: the layout, then each `checks.<name>` by that check's own schema. `checks` is
 * checks/index.ts's GPU_CHECKS, passed in by the agent's registry (checks/ imports this folder's types).
 */
export function validateGpuMonitor(
  raw: unknown,
  file: string,
  checks: readonly GpuCheck[],
): { config?: GpuMonitorConfig; issues: ConfigIssue[] } {
  if (!isRecord(raw)) return { issues: [{ file, path: '', message: 'expected an object at the top level' }] };
  const parsed = top.safeParse(raw);
  if (!parsed.success) return { issues: toConfigIssues(file, parsed.error) };
  const t = parsed.data;
  const issues: ConfigIssue[] = [];
  if (t.interval <= 0) issues.push({ file, path: 'interval', message: 'must be greater than 0' });
  const conditions = t.conditions.length > 0 ? t.conditions : [DEFAULT_CONDITION];
  // The top-level expectedCount is the device-count check's, where it reads it.
  const rawChecks = t.expectedCount === undefined ? t.checks : withExpected(t.checks, t.expectedCount);
  const validated = validateChecks(rawChecks, checks, file, issues);
  if (issues.length > 0) return { issues };
  const condition = (conditions[0] as ConditionConfig).type;
  const config: GpuMonitorConfig = {
    kind: 'nvml',
    file,
    source: t.source,
    library: t.library,
    intervalMs: t.interval,
    expectedCount: t.expectedCount,
    metricsReporting: t.metricsReporting,
    ...healthTag(t),
    conditions,
    checks: validated,
    rules: reportedRules(condition, checks, validated),
  };
  return { config: deepFreeze(config), issues: [] };
}

function validateChecks(
  raw: Readonly<Record<string, unknown>>,
  list: readonly GpuCheck[],
  file: string,
  issues: ConfigIssue[],
): Record<string, GpuCheckConfig> {
  const polled = new Map<string, GpuCheck>(list.map((c) => [c.name, c]));
  const known = [...polled.keys(), ...EVENT_CHECKS];
  for (const name of Object.keys(raw)) {
    if (!known.includes(name)) {
      const message = `unknown check; one of: ${known.join(', ')}`;
      issues.push({ file, path: `checks.${name}`, message });
    }
  }
  const out: Record<string, GpuCheckConfig> = {};
  for (const name of known) {
    const options = polled.get(name)?.options;
    const schema = options ? enabledOnly.extend(optionShape(options)) : enabledOnly;
    const parsed = schema.safeParse(raw[name] ?? {});
    if (!parsed.success) {
      for (const i of toConfigIssues(file, parsed.error)) {
        issues.push({ ...i, path: i.path ? `checks.${name}.${i.path}` : `checks.${name}` });
      }
      continue;
    }
    const { enabled, ...rest } = parsed.data as { enabled: boolean };
    out[name] = { enabled, options: rest };
  }
  return out;
}

function withExpected(checks: Record<string, unknown>, expectedCount: number): Record<string, unknown> {
  const own = checks['device-count'];
  return { ...checks, 'device-count': { ...(isRecord(own) ? own : {}), expectedCount } };
}

/** A check's options schema is a zod object; its shape joins `enabled` in one strict object. */
function optionShape(options: z.ZodType): z.ZodRawShape {
  if (options instanceof z.ZodObject) return options.shape;
  throw new Error('a GPU check options schema must be a zod object');
}

/**
 * The reasons this config can report, as rules: GPUUnhealthy's fatal reasons (impact fatal), the Xid
 * events as rules/gpu.yaml classifies them, and the checks' warning events.
 */
function reportedRules(
  condition: string,
  list: readonly GpuCheck[],
  checks: Readonly<Record<string, GpuCheckConfig>>,
): GpuRule[] {
  const on = (name: string) => checks[name]?.enabled === true;
  const enabled = list.filter((c) => on(c.name));
  const fatal = [FALLEN_OFF_BUS, ...enabled.flatMap((c) => c.reasons?.fatal ?? [])];
  const warning = enabled.flatMap((c) => c.reasons?.warning ?? []);
  if (on('sbe-storm')) warning.push(SBE_STORM);
  const rules: GpuRule[] = [];
  if (on('xid')) {
    for (const code of ownEventCodes()) {
      const held = isFatalXid(code) || code === 149 || code === 154;
      const reason = classifyXid(code).eventReason;
      rules.push(held ? { type: 'temporary', reason, heldBy: condition } : info(reason));
      if (isFatalXid(code)) fatal.push(classifyXid(code).conditionReason as string);
    }
    rules.push(info('NVRMXid'));
  }
  for (const reason of new Set(warning)) rules.push({ type: 'temporary', reason, impact: 'warning' });
  for (const reason of new Set(fatal)) rules.push({ type: 'permanent', condition, reason, impact: 'fatal' });
  return rules;
}

function info(reason: string): GpuRule {
  return { type: 'temporary', reason, impact: 'info' };
}

export function gpuConfigKind(checks: readonly GpuCheck[]): ConfigKind<GpuMonitorConfig> {
  return {
    kind: 'gpu-monitor',
    plugins: ['nvml'],
    validate: (raw, file) => validateGpuMonitor(raw, file, checks),
  };
}
