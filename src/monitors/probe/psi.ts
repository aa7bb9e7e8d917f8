import { z } from 'zod';
import { errorCode } from '../../core/errors.ts';
import { procFile, readText } from '../../host/procfs/proc.ts';
import { byThreshold, mainRule, ok, type ProbeKind, unknown } from './kind.ts';

const pct = z.number().min(0).max(100);
const limits = z.strictObject({ some: pct.optional(), full: pct.optional() });

const options = z.strictObject({
  /** Which running average to compare: PSI publishes 10 s, 60 s and 300 s windows. */
  window: z.enum(['avg10', 'avg60', 'avg300']).default('avg10'),
  cpu: limits.default({ some: 90 }),
  memory: limits.default({ full: 25 }),
  io: limits.default({ full: 50 }),
  /** What a kernel without PSI (psi=0, CONFIG_PSI=n) reports: the condition Unknown, or OK. */
  missing: z.enum(['unknown', 'ok']).default('unknown'),
});

export type PsiOptions = z.infer<typeof options>;

const RESOURCES = ['cpu', 'memory', 'io'] as const;

/** Pressure stall information from /proc/pressure/{cpu,memory,io}. */
export const psiProbe: ProbeKind<PsiOptions> = {
  kind: 'psi',
  options,
  defaults: () => ({
    condition: 'PressureStall',
    reason: 'HighResourcePressure',
    healthyReason: 'NoResourcePressure',
    healthyMessage: 'CPU, memory and I/O pressure are below the thresholds',
  }),
  create(spec, env) {
    const rule = mainRule(spec);
    const o = spec.options;
    return {
      rules: [rule],
      async check(ctx) {
        const over: string[] = [];
        const seen: string[] = [];
        for (const resource of RESOURCES) {
          let text: string;
          try {
            text = await readText(procFile(env.paths.proc, 'pressure', resource), ctx.signal);
          } catch (err) {
            if (errorCode(err) !== 'ENOENT' && errorCode(err) !== 'EOPNOTSUPP') throw err;
            const message = 'PSI is not available (kernel without CONFIG_PSI or booted with psi=0)';
            return [o.missing === 'ok' ? ok(rule, message) : unknown(rule, message)];
          }
          const values = parsePressure(text, o.window);
          for (const line of ['some', 'full'] as const) {
            const limit = o[resource][line];
            const value = values[line];
            if (value === undefined) continue;
            const label = `${resource} ${line} ${o.window}=${value}`;
            seen.push(label);
            if (limit !== undefined && value >= limit) over.push(`${label} >= ${limit}`);
          }
        }
        const message = over.length > 0 ? `pressure: ${over.join(', ')}` : `pressure: ${seen.join(', ')}`;
        return [byThreshold(rule, over.length > 0, message)];
      },
    };
  },
};

/** "some avg10=1.00 avg60=0.50 avg300=0.10 total=123" → {some: 1}. */
export function parsePressure(text: string, window: string): { some?: number; full?: number } {
  const out: { some?: number; full?: number } = {};
  for (const line of text.split('\n')) {
    const [kind, ...fields] = line.trim().split(/\s+/);
    if (kind !== 'some' && kind !== 'full') continue;
    const field = fields.find((f) => f.startsWith(`${window}=`));
    const value = field === undefined ? Number.NaN : Number(field.slice(window.length + 1));
    if (Number.isFinite(value)) out[kind] = value;
  }
  return out;
}
