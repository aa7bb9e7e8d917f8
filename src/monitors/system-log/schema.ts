import { z } from 'zod';
import type { ConfigIssue } from '../../config/errors.ts';
import { formatPath } from '../../config/errors.ts';
import type { ConfigKind } from '../../config/load.ts';
import {
  conditionFields,
  conditionType,
  declaredConditions,
  deepFreeze,
  goDuration,
  healthFields,
  healthTag,
  isRecord,
  refuseReserved,
  toConfigIssues,
} from '../../config/schema-kit.ts';
import { compileGoLayout } from '../../gocompat/time.ts';
import type { LogMonitorConfig } from '../../rules/config.ts';
import { patternError } from '../../rules/pattern.ts';
import { re2Pattern } from '../../rules/schema.ts';
import { unknownReferences } from '../../rules/template.ts';
import { TRUSTED_FIELDS } from '../../sources/journald/trust.ts';
import { fileEvidenceIssues } from './file-writers.ts';

/** pluginConfig keys each log plugin understands; NPD's filelog needs all three of its keys. */
const PLUGIN_KEYS: Readonly<
  Record<string, { readonly allowed: readonly string[]; readonly required: readonly string[] }>
> = {
  kmsg: { allowed: [], required: [] },
  journald: { allowed: ['source', 'unit'], required: [] },
  filelog: {
    allowed: ['timestamp', 'message', 'timestampFormat'],
    required: ['timestamp', 'message', 'timestampFormat'],
  },
};

/** NPD parses lookback and delay only when set, so `""` means 0 there; it loads here too. */
const npdWindow = z.preprocess((v) => (v === '' ? '0' : v), goDuration).default(0);

const condition = z.strictObject({ ...conditionFields, clearAfter: goDuration.optional() });

const rule = z.strictObject({
  type: z.enum(['temporary', 'permanent']),
  condition: z.string().superRefine(refuseReserved).optional(),
  reason: z.string().min(1),
  pattern: re2Pattern,
  patternGeneratedMessageSuffix: z.string().optional(),
  message: z.string().optional(),
  recoverPattern: re2Pattern.optional(),
  count: z.number().int().min(1).optional(),
  window: goDuration.optional(),
  revertPattern: re2Pattern.optional(),
  severity: z.enum(['info', 'warn']).optional(),
  heldBy: conditionType.optional(),
  // The rule's match is an NVIDIA Xid (rules/config.ts): its code and GPU are read from the line.
  occurrence: z.enum(['xid']).optional(),
  ...healthFields,
});

/** A field's allowed values: one string or a list (any of them). */
const fieldValues = z
  .union([z.string().min(1), z.array(z.string().min(1)).min(1)])
  .transform((v) => (typeof v === 'string' ? [v] : v));

/**
 * journald: whose entries may be evidence (sources/journald/trust.ts). Only journald's own fields: a
 * SYSLOG_IDENTIFIER or MESSAGE is whatever the writer says.
 */
const trustedWriter = z.union([
  z.enum(['system', 'any']),
  z.record(z.string(), fieldValues).refine((r) => Object.keys(r).length > 0, {
    message: 'name at least one field, or use "system" or "any"',
  }),
]);

const logMonitor = z.strictObject({
  plugin: z.enum(['kmsg', 'journald', 'filelog']),
  pluginConfig: z.record(z.string(), z.string()).default({}),
  logPath: z.string().default(''),
  lookback: npdWindow,
  delay: npdWindow,
  skipList: z.array(z.string()).default([]),
  bufferSize: z.number().int().min(1).max(1000).default(10),
  source: z.string().default(''),
  metricsReporting: z.boolean().default(true),
  trustedWriter: trustedWriter.optional(),
  conditions: z.array(condition).default([]),
  rules: z.array(rule).default([]),
  ...healthFields,
});

/** Validates a system-log-monitor config (NPD's JSON or our YAML) and returns it normalised and frozen. */
export function validateLogMonitor(
  raw: unknown,
  file: string,
): { config?: LogMonitorConfig; issues: ConfigIssue[] } {
  const parsed = logMonitor.safeParse(raw);
  const issues = [...(parsed.success ? [] : toConfigIssues(file, parsed.error)), ...crossCheck(raw, file)];
  if (!parsed.success || issues.length > 0) return { issues };
  const v = parsed.data;
  const config: LogMonitorConfig = {
    kind: 'system-log',
    file,
    plugin: v.plugin,
    pluginConfig: v.pluginConfig,
    logPath: v.logPath,
    lookbackMs: v.lookback,
    delayMs: v.delay,
    skipList: v.skipList,
    bufferSize: v.bufferSize,
    source: v.source,
    metricsReporting: v.metricsReporting,
    // NPD's journald configs name only an identifier or a unit: their entries need a system writer.
    ...(v.plugin === 'journald' ? { trustedWriter: v.trustedWriter ?? 'system' } : {}),
    // A file names no writer: `any` (every line is evidence) or nothing (no line is; file-writers.ts).
    ...(v.plugin === 'filelog' && v.trustedWriter === 'any' ? { trustedWriter: 'any' as const } : {}),
    ...healthTag(v),
    conditions: v.conditions.map(({ clearAfter, ...c }) => ({ ...c, clearAfterMs: clearAfter })),
    rules: v.rules.map(({ window, ...r }) => ({ ...r, windowMs: window })),
  };
  return { config: deepFreeze(config), issues: [] };
}

/** Checks that span fields; they run on the raw input so they report alongside type errors. */
function crossCheck(raw: unknown, file: string): ConfigIssue[] {
  if (!isRecord(raw)) return [{ file, path: '', message: 'expected an object at the top level' }];
  const issues: ConfigIssue[] = [];
  const add = (path: PropertyKey[], message: string) =>
    issues.push({ file, path: formatPath(path), message });
  checkPluginConfig(raw, add);
  const declared = declaredConditions(raw, add);
  const rules = Array.isArray(raw.rules) ? raw.rules : [];
  rules.forEach((r, i) => {
    if (isRecord(r)) checkRule(r, i, declared, add);
  });
  return [...issues, ...fileEvidenceIssues(raw, file)];
}

type Add = (path: PropertyKey[], message: string) => void;

function checkPluginConfig(raw: Record<string, unknown>, add: Add): void {
  const spec = typeof raw.plugin === 'string' ? PLUGIN_KEYS[raw.plugin] : undefined;
  if (!spec) return;
  const pc = isRecord(raw.pluginConfig) ? raw.pluginConfig : {};
  for (const key of Object.keys(pc)) {
    if (!spec.allowed.includes(key))
      add(['pluginConfig', key], `unknown key for plugin "${String(raw.plugin)}"`);
  }
  for (const key of spec.required) {
    if (typeof pc[key] !== 'string' || pc[key] === '')
      add(['pluginConfig', key], 'required by the filelog plugin');
  }
  if (raw.plugin === 'filelog') checkFilelog(raw, pc, add);
  if (raw.plugin === 'filelog' && raw.trustedWriter !== undefined && raw.trustedWriter !== 'any') {
    add(['trustedWriter'], 'a log file records no writer: only "any" (every line is evidence) applies');
  } else if (raw.trustedWriter !== undefined && raw.plugin !== 'journald' && raw.plugin !== 'filelog') {
    add(['trustedWriter'], 'only the journald plugin knows who wrote a line');
  }
  const fields = isRecord(raw.trustedWriter) ? Object.keys(raw.trustedWriter) : [];
  for (const f of fields.filter((f) => !(TRUSTED_FIELDS as readonly string[]).includes(f))) {
    add(['trustedWriter', f], `not a field journald sets; use ${TRUSTED_FIELDS.join(', ')}`);
  }
  if (raw.plugin === 'journald' && !pc.source && !pc.unit) {
    add(['pluginConfig'], 'journald needs "source" (SYSLOG_IDENTIFIER) or "unit" (_SYSTEMD_UNIT)');
  }
}

/** What the filelog source compiles when it is built: caught here, so it fails at load, not at (re)start. */
function checkFilelog(raw: Record<string, unknown>, pc: Record<string, unknown>, add: Add): void {
  if (raw.logPath === undefined || raw.logPath === '') add(['logPath'], 'required by the filelog plugin');
  for (const key of ['timestamp', 'message'] as const) {
    const err = typeof pc[key] === 'string' && pc[key] !== '' ? patternError(pc[key]) : undefined;
    if (err) add(['pluginConfig', key], `invalid regex: ${err}`);
  }
  const format = pc.timestampFormat;
  const layout = typeof format === 'string' && format !== '' ? compileGoLayout(format) : undefined;
  if (layout instanceof Error) add(['pluginConfig', 'timestampFormat'], layout.message);
}

function checkRule(r: Record<string, unknown>, i: number, declared: Set<string>, add: Add): void {
  if (r.type === 'permanent') {
    if (typeof r.condition !== 'string' || r.condition === '') {
      add(['rules', i, 'condition'], 'a permanent rule needs a condition');
    } else if (!declared.has(r.condition)) {
      add(['rules', i, 'condition'], `condition "${r.condition}" is not declared in conditions`);
    }
  } else if (r.recoverPattern !== undefined) {
    add(['rules', i, 'recoverPattern'], 'only permanent rules can recover');
  }
  if (r.type === 'permanent' && r.severity !== undefined) {
    add(['rules', i, 'severity'], 'only temporary rules have a severity (a condition change has its own)');
  }
  if (r.type === 'permanent' && r.heldBy !== undefined) {
    add(['rules', i, 'heldBy'], 'only temporary rules are held by a condition (a permanent rule is one)');
  }
  for (const field of ['reason', 'message'] as const) {
    const template = r[field];
    if (typeof template !== 'string' || typeof r.pattern !== 'string') continue;
    for (const ref of unknownReferences(template, r.pattern)) {
      add(['rules', i, field], `${ref} does not name a capture group of the pattern`);
    }
  }
  if ((r.count === undefined) !== (r.window === undefined)) {
    add(['rules', i, r.count === undefined ? 'count' : 'window'], 'count and window go together');
  }
  if (r.revertPattern !== undefined && r.count === undefined) {
    add(['rules', i, 'revertPattern'], 'revertPattern needs count and window');
  }
}

export const systemLogConfigKind: ConfigKind<LogMonitorConfig> = {
  kind: 'system-log-monitor',
  plugins: ['kmsg', 'journald', 'filelog'],
  validate: validateLogMonitor,
};
