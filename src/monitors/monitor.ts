import type { Condition, Status } from '../types.ts';

/** How a running monitor is doing, as /healthz and the monitor metrics report it. */
export interface MonitorHealth {
  /** The monitor is running (its reader or scheduler is alive). */
  readonly up: boolean;
  /** The last read or probe succeeded. A monitor can be up but unhealthy (e.g. the journal is missing). */
  readonly healthy: boolean;
  /** Why it is not healthy, for logs and /healthz bodies. */
  readonly detail?: string;
}

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
