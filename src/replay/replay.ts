import type { Condition } from '../core/types.ts';
import type { LogMonitorConfig } from '../rules/config.ts';
import { type EngineResult, LogRuleEngine } from '../rules/log-engine.ts';
import type { ReplayLine } from './parse-input.ts';

/** One line of replay output; the fields are the contract golden tests and users rely on. */
export interface ReplayRecord {
  readonly kind: 'event' | 'condition';
  readonly source: string;
  readonly type: string;
  readonly status?: string;
  readonly reason: string;
  readonly message: string;
  readonly timestamp: string;
}

/**
 * Runs monitor configs over recorded lines with time taken from the records: no lookback, no delay and
 * no I/O, so the same input always gives the same output.
 */
export function replay(
  configs: readonly LogMonitorConfig[],
  lines: readonly ReplayLine[],
  startMs: number,
): ReplayRecord[] {
  const runs = configs.map((config) => ({
    config,
    engine: new LogRuleEngine(config, startMs),
    known: new Map<string, Condition>(),
  }));
  for (const run of runs) for (const c of run.engine.conditions()) run.known.set(c.type, c);
  const out: ReplayRecord[] = [];
  for (const line of lines) {
    for (const run of runs) {
      if (!acceptsLine(run.config, line)) continue;
      collect(run.engine.tick(line.timestamp), run.known, out);
      const skipped = run.config.skipList.some((s) => line.message.includes(s));
      if (!skipped) collect(run.engine.process(line), run.known, out);
    }
  }
  return out;
}

function acceptsLine(config: LogMonitorConfig, line: ReplayLine): boolean {
  if (config.plugin !== 'journald') return true;
  const { source, unit } = config.pluginConfig;
  if (source && line.identifier !== undefined && line.identifier !== source) return false;
  if (unit && line.unit !== undefined && line.unit !== unit) return false;
  return true;
}

function collect(result: EngineResult | undefined, known: Map<string, Condition>, out: ReplayRecord[]): void {
  if (!result) return;
  const { source } = result.status;
  for (const e of result.status.events) {
    const type = e.severity === 'warn' ? 'Warning' : 'Normal';
    out.push({
      kind: 'event',
      source,
      type,
      reason: e.reason,
      message: e.message,
      timestamp: iso(e.timestamp),
    });
  }
  for (const c of result.status.conditions) {
    const prev = known.get(c.type);
    known.set(c.type, c);
    if (prev && prev.status === c.status && prev.reason === c.reason && prev.message === c.message) continue;
    out.push({
      kind: 'condition',
      source,
      type: c.type,
      status: c.status,
      reason: c.reason,
      message: c.message,
      timestamp: iso(c.transition),
    });
  }
}

/** RFC 3339 with second precision when there are no milliseconds, as Kubernetes prints times. */
function iso(ms: number): string {
  const s = new Date(ms).toISOString();
  return s.endsWith('.000Z') ? `${s.slice(0, -5)}Z` : s;
}
