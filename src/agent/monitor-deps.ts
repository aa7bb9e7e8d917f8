import type { Registry } from 'prom-client';
import type { Clock } from '../core/clock.ts';
import type { Logger } from '../core/logger.ts';
import { hostPaths } from '../host/paths.ts';
import { ProblemMetrics } from '../metrics/problem-metrics.ts';
import type { MonitorDeps } from '../monitors/deps.ts';
import { SourceHub } from '../sources/hub.ts';
import type { Options } from './options.ts';

/**
 * What every monitor gets: one clock, registry, host paths and source hub, the trust flags, and the
 * Node's capacity once the exporter has fetched the Node (`nodeCapacity`, late-bound by the caller).
 */
export function monitorDeps(
  options: Options,
  clock: Clock,
  registry: Registry,
  logger: Logger,
  nodeCapacity?: (resource: string) => string | undefined,
): MonitorDeps {
  return {
    clock,
    logger,
    registry,
    problemMetrics: new ProblemMetrics(registry),
    paths: hostPaths(options.hostRoot, options.hostProc),
    trustQuotedText: options.trustQuotedText,
    trustJournalWriters: options.trustJournalWriters,
    trustFileWriters: options.trustFileWriters,
    sources: new SourceHub(),
    nodeCapacity,
    gpuExpectedCount: options.gpuExpectedCount || undefined,
  };
}
