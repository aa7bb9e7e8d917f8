import { type BackoffPolicy, jitterDown, retryDelayMs } from '../kube/backoff.ts';

/**
 * The first sync waits up to this long after start: agents restarted together (a rollout with a large
 * maxUnavailable, a node image update) spread their first PATCH over this window instead of one second.
 */
export const START_JITTER_MS = 5_000;
/**
 * After the first sync, a sync that carried a change, and a sync that ended a failure streak, the next
 * heartbeat comes up to half a period early: the kubelet's delayAfterNodeStatusChange
 * (pkg/kubelet/kubelet.go, uniform over +-0.5 x nodeStatusReportFrequency after a status change or a
 * restart), here only ever early so lastHeartbeatTime stays at most one period old as NPD promises.
 * Agents that wrote in the same second (a correlated failure, the end of an outage) then no longer
 * heartbeat in the same second forever after.
 */
export const RESTART_HEARTBEAT_JITTER = 0.5;
/** Every other heartbeat: up to 4 % early, the kubelet's wait.JitterUntil(syncNodeStatus, 0.04). */
export const HEARTBEAT_JITTER = 0.04;
/**
 * Failed syncs: the first two retries wait NPD's resync period (10 s) stretched by up to half, so a lost
 * PATCH or one 429 heals within 15 s; then 20 s, then 40 s for good (40-60 s with the jitter), so an
 * outage costs a fleet about one try per node per 50 s, spread over 20 s, not every node every 10 s in
 * the same second. A Retry-After longer than the backoff is honoured, up to 60 s, with the same jitter:
 * every agent hears the same value.
 */
export function resyncPolicy(resyncMs: number): BackoffPolicy {
  return { initialMs: resyncMs, maxMs: 4 * resyncMs, jitter: 0.5, flatFailures: 2, maxRetryAfterMs: 60_000 };
}

export interface SyncScheduleOptions {
  readonly heartbeatMs: number;
  readonly resyncMs: number;
  readonly startJitterMs: number;
  readonly random: () => number;
}

/** When the condition manager's next sync is due; time in epoch ms, nothing here reads a clock. */
export class SyncSchedule {
  private readonly opts: SyncScheduleOptions;
  private readonly policy: BackoffPolicy;
  private firstAt = Number.NEGATIVE_INFINITY;
  private lastTryAt: number | undefined;
  private heartbeatAt = Number.POSITIVE_INFINITY;
  private retryAt: number | undefined;
  private failures = 0;
  private succeededOnce = false;

  constructor(opts: SyncScheduleOptions) {
    this.opts = opts;
    this.policy = resyncPolicy(opts.resyncMs);
  }

  /** When the last sync started, if one has. */
  get lastTry(): number | undefined {
    return this.lastTryAt;
  }

  /** Failed syncs in a row. */
  get failedInARow(): number {
    return this.failures;
  }

  started(now: number): void {
    this.firstAt = now + this.opts.startJitterMs * this.opts.random();
  }

  /**
   * Whether a sync is due. While syncs fail, nothing but the retry time counts: a change waits for the
   * retry (which sends the newest state), so a condition that flaps during an outage adds no requests.
   */
  due(now: number, changed: boolean, annotationsDueAt: number | undefined): boolean {
    if (this.retryAt !== undefined) return now >= this.retryAt;
    if (this.lastTryAt === undefined) return now >= this.firstAt;
    if (changed) return true;
    if (annotationsDueAt !== undefined && now >= annotationsDueAt) return true;
    return now >= this.heartbeatAt;
  }

  tried(now: number): void {
    this.lastTryAt = now;
  }

  /** After a success: the next heartbeat, drawn early by the kubelet's rules above. */
  succeeded(changed: boolean): void {
    const start = this.lastTryAt ?? 0;
    const unsettled = changed || !this.succeededOnce || this.failures > 0;
    this.succeededOnce = true;
    const factor = unsettled ? RESTART_HEARTBEAT_JITTER : HEARTBEAT_JITTER;
    this.heartbeatAt = start + jitterDown(this.opts.heartbeatMs, factor, this.opts.random);
    this.failures = 0;
    this.retryAt = undefined;
  }

  /**
   * After a failure at `now`: when to retry, measured from the failure (a sync whose quick retries all
   * timed out took a minute already, and must not retry at once); returns the wait.
   */
  failed(now: number, retryAfterMs: number | undefined): number {
    this.failures++;
    const wait = retryDelayMs(this.failures, this.policy, this.opts.random, retryAfterMs);
    this.retryAt = now + wait;
    return wait;
  }
}
