import type { Counter, Histogram, Registry } from 'prom-client';
import { counter, histogram } from '../../core/metrics.ts';
import type { PluginOutcome } from './exec.ts';

/** Why a run counts in npd_plugin_errors_total. */
export type PluginErrorReason = 'start' | 'unknown' | 'abandoned' | 'pipe' | 'internal';

const ERROR_REASONS: readonly PluginErrorReason[] = ['start', 'unknown', 'abandoned', 'pipe', 'internal'];

/** The agent's own custom-plugin metrics; every failure, timeout and truncation lands in one of them. */
export class PluginMetrics {
  private readonly source: string;
  private readonly runs: Counter<'source' | 'rule' | 'result'>;
  private readonly duration: Histogram<'source'>;
  private readonly errors: Counter<'source' | 'reason'>;
  private readonly timeouts: Counter<'source' | 'rule'>;
  private readonly truncated: Counter<'source' | 'stream'>;

  constructor(registry: Registry, source: string, ruleLabels: readonly string[]) {
    this.source = source;
    this.runs = counter(registry, {
      name: 'npd_plugin_runs_total',
      help: 'Custom plugin runs by protocol result (ok, nonok, unknown).',
      labelNames: ['source', 'rule', 'result'],
    });
    this.duration = histogram(registry, {
      name: 'npd_plugin_duration_seconds',
      help: 'Wall time of custom plugin runs, from spawn to exit or kill.',
      labelNames: ['source'],
      buckets: [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 180],
    });
    this.errors = counter(registry, {
      name: 'npd_plugin_errors_total',
      help: 'Custom plugin failures: start (cannot exec), unknown (temporary rule answered Unknown), abandoned (process outlived SIGKILL), pipe (reading its output failed), internal.',
      labelNames: ['source', 'reason'],
    });
    this.timeouts = counter(registry, {
      name: 'npd_plugin_timeouts_total',
      help: 'Custom plugin runs killed (whole process group, SIGKILL) for exceeding their timeout.',
      labelNames: ['source', 'rule'],
    });
    this.truncated = counter(registry, {
      name: 'npd_plugin_output_truncated_total',
      help: 'Custom plugin runs whose stdout (4096-byte capture or max_output_length) or stderr (4096 bytes) was cut.',
      labelNames: ['source', 'stream'],
    });
    // Zero series up front, so an alert on rate() sees the first failure.
    for (const reason of ERROR_REASONS) this.errors.inc({ source, reason }, 0);
    for (const rule of ruleLabels) this.timeouts.inc({ source, rule }, 0);
    for (const stream of ['stdout', 'stderr']) this.truncated.inc({ source, stream }, 0);
  }

  record(rule: string, outcome: PluginOutcome): void {
    const source = this.source;
    this.runs.inc({ source, rule, result: outcome.status.toLowerCase() });
    this.duration.observe({ source }, outcome.durationMs / 1000);
    if (outcome.failure === 'timeout') this.timeouts.inc({ source, rule });
    if (outcome.failure === 'start') this.error('start');
    if (outcome.abandoned) this.error('abandoned');
    if (outcome.pipeError) this.error('pipe');
    if (outcome.stdoutTruncated) this.truncated.inc({ source, stream: 'stdout' });
    if (outcome.stderrTruncated) this.truncated.inc({ source, stream: 'stderr' });
  }

  error(reason: PluginErrorReason): void {
    this.errors.inc({ source: this.source, reason });
  }
}

/**
 * The `rule` label: the rule's reason, which is what operators know it by. NPD's own example config
 * has a temporary and a permanent rule sharing one reason, so a reason used twice gets its rule index.
 */
export function ruleLabels(rules: readonly { readonly reason: string }[]): string[] {
  const uses = new Map<string, number>();
  for (const r of rules) uses.set(r.reason, (uses.get(r.reason) ?? 0) + 1);
  return rules.map((r, i) => ((uses.get(r.reason) ?? 0) > 1 ? `${r.reason}[${i}]` : r.reason));
}
