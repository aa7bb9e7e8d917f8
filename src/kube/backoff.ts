/**
 * How an agent waits before it writes to the API server again, so that a fleet of agents that failed
 * together (an outage, an APF rejection of every node's request in the same second) does not come back
 * together. Pure functions of an injected uniform random in [0, 1), so tests are deterministic.
 */

/**
 * client-go's wait.Jitter(duration, maxFactor): `ms` plus up to `factor` times `ms`, never less. Used
 * where waiting longer is harmless (a retry) and waiting less is not (a server's Retry-After).
 */
export function jitterUp(ms: number, factor: number, random: () => number): number {
  return ms + ms * factor * random();
}

/**
 * The mirror image: `ms` less up to `factor` times `ms`, never more. For a heartbeat that consumers
 * may expect at least once per period (NPD's contract for lastHeartbeatTime), so jitter may only
 * bring it forward.
 */
export function jitterDown(ms: number, factor: number, random: () => number): number {
  return ms - ms * factor * random();
}

export interface BackoffPolicy {
  /** The wait after the first failures, before any doubling. */
  readonly initialMs: number;
  /** The doubling stops here (before jitter). */
  readonly maxMs: number;
  /** wait.Jitter's maxFactor: each wait is stretched by up to this fraction. */
  readonly jitter: number;
  /** Failures in a row that wait `initialMs` before the doubling starts; default 1. */
  readonly flatFailures?: number;
  /** The most a server's Retry-After may make us wait. */
  readonly maxRetryAfterMs: number;
}

/**
 * The wait after `failures` failures in a row (1 = the first): capped doubling, as client-go's
 * ExponentialBackoffManager, stretched by the policy's jitter, and never shorter than the server's
 * Retry-After (itself capped, and jittered like the backoff, since every agent hears the same value).
 */
export function retryDelayMs(
  failures: number,
  policy: BackoffPolicy,
  random: () => number,
  retryAfterMs?: number,
): number {
  const doublings = Math.max(0, failures - (policy.flatFailures ?? 1));
  const base = Math.min(policy.maxMs, policy.initialMs * 2 ** Math.min(doublings, 30));
  const draw = random();
  const backoff = jitterUp(base, policy.jitter, () => draw);
  if (retryAfterMs === undefined) return backoff;
  const asked = jitterUp(Math.min(retryAfterMs, policy.maxRetryAfterMs), policy.jitter, () => draw);
  return Math.max(backoff, asked);
}
