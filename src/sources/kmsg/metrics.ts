import type { Registry } from 'prom-client';
import { counter, zeroed } from '../../core/metrics.ts';
import { linesMalformed, linesRead, sourceCounter } from '../metrics.ts';

export const SKIP_REASONS = ['before_start', 'duplicate', 'not_kernel', 'empty', 'callback_error'] as const;
export type SkipReason = (typeof SKIP_REASONS)[number];

type Inc = { inc(value?: number): void };

export interface ReaderMetrics {
  readonly read: Inc;
  readonly malformed: Inc;
  readonly lost: Inc;
  readonly restarts: Inc;
  readonly emptyWakes: Inc;
  readonly skipped: (reason: SkipReason) => Inc;
}

export function createMetrics(registry: Registry, source: string): ReaderMetrics {
  const bySource = (name: string, help: string): Inc => sourceCounter(registry, source, name, help);
  const skipped = counter(registry, {
    name: 'npd_kmsg_records_skipped_total',
    help: 'Kernel log records read but not delivered, by reason.',
    labelNames: ['source', 'reason'],
  });
  zeroed(skipped, ...SKIP_REASONS.map((reason) => ({ source, reason })));
  return {
    read: linesRead(registry, source),
    malformed: linesMalformed(registry, source),
    lost: bySource(
      'npd_kmsg_records_lost_total',
      'Kernel log records overwritten in the ring buffer, or too large for the read buffer, before being read.',
    ),
    restarts: bySource('npd_monitor_restarts_total', 'Times a monitor reopened its source after a failure.'),
    emptyWakes: bySource(
      'npd_kmsg_spurious_wakeups_total',
      'Times poll(2) reported the kmsg path readable but a read found nothing (not a kmsg device); the reader backs off.',
    ),
    skipped: (reason) => skipped.labels({ source, reason }),
  };
}
