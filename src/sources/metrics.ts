import type { Counter, Registry } from 'prom-client';
import { counter, zeroed } from '../core/metrics.ts';

type Inc = { inc(value?: number): void };

/** Why a line that was read did not reach the rules. */
export const DROP_REASONS = ['before_start', 'empty', 'oversized', 'callback_error'] as const;
export type DropReason = (typeof DROP_REASONS)[number];

/**
 * Counters shared by the journald and filelog sources, labelled by monitor source. Every line read is
 * delivered, dropped{reason}, or counted as malformed (journald) / unparsable (filelog).
 */
export interface LogSourceMetrics {
  readonly read: Inc;
  readonly truncated: Inc;
  dropped(reason: DropReason): Inc;
}

/** npd_log_lines_read_total: every source counts each line it read here, before any filtering. */
export function linesRead(registry: Registry, source: string): Inc {
  return sourceCounter(
    registry,
    source,
    'npd_log_lines_read_total',
    'Log lines read from a log source, before filtering.',
  );
}

/** npd_log_lines_malformed_total: lines (kmsg records, journal entries) dropped as unparsable. */
export function linesMalformed(registry: Registry, source: string): Inc {
  return sourceCounter(registry, source, 'npd_log_lines_malformed_total', 'Log lines dropped as unparsable.');
}

export function logSourceMetrics(registry: Registry, source: string): LogSourceMetrics {
  const dropped = counter(registry, {
    name: 'npd_log_lines_dropped_total',
    help: 'Log lines read from a journald or filelog source but not delivered to the rules, by reason.',
    labelNames: ['source', 'reason'],
  });
  zeroed(dropped, ...DROP_REASONS.map((reason) => ({ source, reason })));
  return {
    read: linesRead(registry, source),
    truncated: sourceCounter(
      registry,
      source,
      'npd_log_lines_truncated_total',
      'Log lines delivered cut to the line bound (16 KiB journal messages, 64 KiB file lines).',
    ),
    dropped: (reason) => dropped.labels({ source, reason }),
  };
}

/** A per-source counter with only the `source` label. */
export function sourceCounter(
  registry: Registry,
  source: string,
  name: string,
  help: string,
): Counter.Internal {
  const c = counter(registry, { name, help, labelNames: ['source'] });
  zeroed(c, { source });
  return c.labels({ source });
}
