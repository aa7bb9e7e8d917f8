import type { ConfigKind } from '../config/load.ts';
import type { Condition, MonitorHealth, Status } from '../core/types.ts';
import type { MonitorDeps } from './deps.ts';

/**
 * A monitor watches one thing on the host and reports Status objects. Every monitor type passes the
 * shared contract suite in test/unit/monitors/contract.test.ts.
 */
export interface Monitor {
  /** The source name (NPD's `source`), unique per config file. */
  readonly source: string;
  /**
   * Starts watching. `emit` is called synchronously from the monitor's own callbacks, never after stop().
   * Throws only for failures that retrying cannot fix; runtime failures degrade health instead.
   */
  start(emit: (status: Status) => void): Promise<void>;
  /** Stops watching and releases every fd, timer and child process. Idempotent. */
  stop(): Promise<void>;
  health(): MonitorHealth;
  /**
   * Resumes conditions from what the Node showed at start-up (so a restart does not flap them to
   * False), then re-publishes. Conditions a monitor does not own are ignored.
   */
  restore?(conditions: readonly Condition[]): void;
}

/** A monitor type: the config it accepts and how to build a monitor from it. */
export interface MonitorType<C = unknown> {
  readonly configKind: ConfigKind<C>;
  create(config: C, deps: MonitorDeps): Monitor;
}
