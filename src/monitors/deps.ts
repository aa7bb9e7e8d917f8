import { join } from 'node:path';
import type { Registry } from 'prom-client';
import type { ProblemMetrics } from '../metrics/problem-metrics.ts';
import type { Clock } from '../util/clock.ts';
import type { Logger } from '../util/logger.ts';
import type { SourceHub } from './source-hub.ts';

/** Host paths, all below --host-root, so a container sees the host and tests see fixtures. */
export interface HostPaths {
  readonly root: string;
  readonly proc: string;
  readonly sys: string;
  readonly dev: string;
}

export function hostPaths(root: string): HostPaths {
  return { root, proc: join(root, 'proc'), sys: join(root, 'sys'), dev: join(root, 'dev') };
}

/** What every monitor factory receives. */
export interface MonitorDeps {
  readonly clock: Clock;
  readonly logger: Logger;
  readonly registry: Registry;
  readonly problemMetrics: ProblemMetrics;
  readonly paths: HostPaths;
  /** Shares readers between monitors of the same source; without it each monitor reads alone. */
  readonly sources?: SourceHub;
}
