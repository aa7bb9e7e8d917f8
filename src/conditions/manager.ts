import type { Counter, Gauge, Registry } from 'prom-client';
import type { Clock, TimerHandle } from '../core/clock.ts';
import { retryAfterMs, SinkError } from '../core/errors.ts';
import type { Logger } from '../core/logger.ts';
import { counter, gauge } from '../core/metrics.ts';
import { isReservedConditionType } from '../core/reserved-conditions.ts';
import type { Condition } from '../core/types.ts';
import { formatRfc3339Seconds } from '../kube/time.ts';
import type { NodeConditionJson, NodeStatusWriter } from './node-condition.ts';
import type { PatchExtras } from './ownership.ts';
import { START_JITTER_MS, SyncSchedule } from './sync-schedule.ts';

export type { NodeConditionJson, NodeStatusWriter } from './node-condition.ts';

/** NPD condition/manager.go: updatePeriod, resyncPeriod and the default heartbeat. */
export const UPDATE_PERIOD_MS = 1_000;
export const RESYNC_PERIOD_MS = 10_000;
export const DEFAULT_HEARTBEAT_PERIOD_MS = 5 * 60_000;
/** client-go retry.DefaultRetry, which NPD wraps around every status patch: 5 steps, 10 ms, jitter 0.1. */
export const QUICK_ATTEMPTS = 5;
export const QUICK_RETRY_DELAY_MS = 10;
/**
 * /readyz turns 503 after this many syncs in a row failed (each after its quick retries). Failed syncs
 * are retried every RESYNC_PERIOD_MS, so an API outage shows after about 10 s, one lost patch does not.
 */
export const NOT_READY_AFTER_FAILED_SYNCS = 2;

export interface ConditionManagerOptions {
  /** Absent when --k8s-exporter-update-node-conditions=false: conditions are tracked but never written. */
  readonly writer: NodeStatusWriter | undefined;
  readonly clock: Clock;
  readonly registry: Registry;
  readonly logger?: Logger;
  /** --k8s-exporter-heartbeat-period; default 5 min. */
  readonly heartbeatPeriodMs?: number;
  readonly updatePeriodMs?: number;
  readonly resyncPeriodMs?: number;
  /** Attempts per sync before waiting for the resync; default 5. */
  readonly quickAttempts?: number;
  readonly quickRetryDelayMs?: number;
  /** Uniform in [0, 1): the jitter of the first sync, heartbeats, retries (sync-schedule.ts). */
  readonly random?: () => number;
  /** The first sync waits up to this long after start(); default 5 s. */
  readonly startJitterMs?: number;
  /** No sync before this settles: the startup state is read from the Node first (NPD #304). */
  readonly hold?: Promise<unknown>;
  /** Deletions and annotations to send with every patch (condition ownership). */
  readonly extras?: () => PatchExtras;
  readonly onSynced?: (sent: PatchExtras | undefined) => void;
  /** Which types reach the Node (--extra-conditions); update() ignores the others. Default: all. */
  readonly publishes?: (type: string) => boolean;
}

function sameCondition(a: Condition | undefined, b: Condition): boolean {
  return (
    a !== undefined &&
    a.status === b.status &&
    a.transition === b.transition &&
    a.reason === b.reason &&
    a.message === b.message
  );
}

/** 4xx answers will not change within milliseconds, and a Retry-After asks us to hold off. */
function quickRetryable(err: unknown): boolean {
  if (retryAfterMs(err) !== undefined) return false;
  const code = err instanceof SinkError ? err.statusCode : undefined;
  return code === undefined || code >= 500;
}

/**
 * NPD's condition manager. Monitors call update() (last writer per type wins) and never wait: a 1 s tick
 * folds updates in and syncs when a condition changed, when a failed sync's jittered backoff is over
 * (10 s at first, as NPD's resync), or when the heartbeat is due (jittered, never later than the
 * period); sync-schedule.ts says when. A sync PATCHes every known condition with lastHeartbeatTime =
 * now. During an outage only the latest value per type is kept, so recovery writes the current state,
 * not the history.
 *
 * synced() (for /readyz) is true when there is nothing to write (no writer, or no condition reported
 * yet); otherwise after the first successful sync, until NOT_READY_AFTER_FAILED_SYNCS syncs in a row
 * fail, and again from the next success. NPD has no readiness; this makes an agent that cannot write
 * its conditions visible (and halts a rollout of one) within seconds, not heartbeat periods.
 */
export class ConditionManager {
  private readonly writer: NodeStatusWriter | undefined;
  private readonly clock: Clock;
  private readonly logger: Logger | undefined;
  private readonly updateMs: number;
  private readonly schedule: SyncSchedule;
  private readonly quickAttempts: number;
  private readonly quickDelayMs: number;
  private readonly random: () => number;
  private readonly current = new Map<string, Condition>();
  private readonly pending = new Map<string, Condition>();
  private readonly syncs: Counter<'result'>;
  private readonly retries: Counter;
  private readonly resyncs: Counter;
  private readonly lastSyncGauge: Gauge;
  private timer: TimerHandle | undefined;
  private running = false;
  private inFlight: Promise<void> | undefined;
  private dirty = false;
  private lastSuccess: number | undefined;
  private failedSyncs = 0;
  private annotationsDueAt: number | undefined;
  private held: boolean;
  private readonly extras: (() => PatchExtras) | undefined;
  private readonly onSynced: ((sent: PatchExtras | undefined) => void) | undefined;
  private readonly publishes: (type: string) => boolean;

  constructor(opts: ConditionManagerOptions) {
    this.writer = opts.writer;
    this.clock = opts.clock;
    this.logger = opts.logger;
    this.updateMs = opts.updatePeriodMs ?? UPDATE_PERIOD_MS;
    this.quickAttempts = Math.max(1, opts.quickAttempts ?? QUICK_ATTEMPTS);
    this.quickDelayMs = opts.quickRetryDelayMs ?? QUICK_RETRY_DELAY_MS;
    this.random = opts.random ?? Math.random;
    this.schedule = new SyncSchedule({
      heartbeatMs: opts.heartbeatPeriodMs ?? DEFAULT_HEARTBEAT_PERIOD_MS,
      resyncMs: opts.resyncPeriodMs ?? RESYNC_PERIOD_MS,
      startJitterMs: opts.startJitterMs ?? START_JITTER_MS,
      random: this.random,
    });
    this.extras = opts.extras;
    this.onSynced = opts.onSynced;
    // The kubelet's types never, whatever publishes says (config validation already refuses them).
    this.publishes = (type) => !isReservedConditionType(type) && (opts.publishes?.(type) ?? true);
    this.held = opts.hold !== undefined;
    void opts.hold?.finally(() => {
      this.held = false;
    });
    this.syncs = counter(opts.registry, {
      name: 'npd_condition_sync_total',
      help: 'Node condition syncs (after quick retries) by result.',
      labelNames: ['result'],
    });
    this.syncs.inc({ result: 'success' }, 0);
    this.syncs.inc({ result: 'failure' }, 0);
    this.retries = counter(opts.registry, {
      name: 'npd_condition_sync_retries_total',
      help: 'Quick retries of a failed node condition patch within one sync.',
    });
    this.resyncs = counter(opts.registry, {
      name: 'npd_condition_resyncs_total',
      help: "Syncs that retry a failed sync once its jittered backoff (or the server's Retry-After) is over.",
    });
    this.resyncs.inc(0);
    this.lastSyncGauge = gauge(opts.registry, {
      name: 'npd_condition_last_sync_timestamp_seconds',
      help: 'Unix time of the last successful node condition sync.',
    });
  }

  /** Records the latest value of one condition type; never blocks and never throws. */
  update(condition: Condition): void {
    if (this.publishes(condition.type)) this.pending.set(condition.type, condition);
  }

  /**
   * Asks for a sync on the next tick even though no condition changed (the annotations did), at most
   * once per `minIntervalMs` so a burst of events costs one patch.
   */
  requestSync(minIntervalMs: number): void {
    const last = this.schedule.lastTry;
    const due = last === undefined ? this.clock.now() : last + minIntervalMs;
    this.annotationsDueAt = Math.min(this.annotationsDueAt ?? Number.POSITIVE_INFINITY, due);
  }

  /** Starts the tick loop and returns at once; the first sync happens on the first tick. */
  start(): void {
    if (this.running) return;
    this.running = true;
    this.schedule.started(this.clock.now());
    this.arm();
  }

  stop(): void {
    this.running = false;
    this.timer?.cancel();
    this.timer = undefined;
  }

  /**
   * At shutdown: stops the loop and sends, once, what the next tick would have sent (changed conditions,
   * moved event watermarks), so a restarted agent neither loses a change nor re-posts our events.
   */
  async flush(): Promise<void> {
    this.stop();
    await this.inFlight;
    this.foldPending();
    // Not after a failed sync: a last try at a failing API could outlive the shutdown grace period.
    const owed = this.dirty || this.annotationsDueAt !== undefined;
    if (owed && this.failedSyncs === 0 && this.writer && this.current.size > 0 && !this.held)
      await this.sync();
  }

  /** The latest value of every condition type, in first-reported order (for GET /conditions). */
  conditions(): Condition[] {
    const merged = new Map(this.current);
    for (const [type, c] of this.pending) merged.set(type, c);
    return [...merged.values()];
  }

  /** Epoch ms of the last successful sync, if any. */
  get lastSyncSuccess(): number | undefined {
    return this.lastSuccess;
  }

  synced(): boolean {
    if (!this.writer) return true;
    if (this.lastSuccess === undefined) return this.current.size === 0 && this.pending.size === 0;
    return this.failedSyncs < NOT_READY_AFTER_FAILED_SYNCS;
  }

  private arm(): void {
    this.timer = this.clock.setTimeout(() => this.tick(), this.updateMs);
  }

  private tick(): void {
    if (!this.running) return;
    this.foldPending();
    if (!this.inFlight && this.shouldSync()) this.inFlight = this.sync();
    this.arm();
  }

  private foldPending(): void {
    for (const [type, c] of this.pending) {
      if (!sameCondition(this.current.get(type), c)) this.dirty = true;
      this.current.set(type, c); // a change the Node would not see may still be news: its evidence
    }
    this.pending.clear();
  }

  private shouldSync(): boolean {
    if (!this.writer || this.current.size === 0 || this.held) return false;
    return this.schedule.due(this.clock.now(), this.dirty, this.annotationsDueAt);
  }

  private async sync(): Promise<void> {
    const changed = this.dirty;
    if (this.failedSyncs > 0) this.resyncs.inc();
    this.schedule.tried(this.clock.now());
    this.dirty = false;
    this.annotationsDueAt = undefined;
    try {
      const sent = await this.patchWithRetries();
      this.onSynced?.(sent);
      this.schedule.succeeded(changed);
      this.lastSuccess = this.clock.now();
      this.failedSyncs = 0;
      this.syncs.inc({ result: 'success' });
      this.lastSyncGauge.set(this.lastSuccess / 1000);
    } catch (err) {
      this.failedSyncs++;
      this.syncs.inc({ result: 'failure' });
      const wait = this.schedule.failed(this.clock.now(), retryAfterMs(err));
      this.logger?.warn({ err, retryInMs: Math.round(wait) }, 'failed to update node conditions');
    } finally {
      this.inFlight = undefined;
    }
  }

  /** Each attempt re-reads the conditions, so a retry sends the newest values and a fresh heartbeat. */
  private async patchWithRetries(): Promise<PatchExtras | undefined> {
    const writer = this.writer;
    if (!writer) return undefined;
    for (let attempt = 1; ; attempt++) {
      try {
        const extras = this.extras?.();
        await writer.patchConditions(this.wire(), extras);
        return extras;
      } catch (err) {
        if (attempt >= this.quickAttempts || !quickRetryable(err) || !this.running) throw err;
        this.retries.inc();
        await this.sleep(this.quickDelayMs * (1 + 0.1 * this.random()));
      }
    }
  }

  private wire(): NodeConditionJson[] {
    const heartbeat = formatRfc3339Seconds(this.clock.now());
    return [...this.current.values()].map((c) => ({
      type: c.type,
      status: c.status,
      lastHeartbeatTime: heartbeat,
      lastTransitionTime: formatRfc3339Seconds(c.transition),
      reason: c.reason,
      message: c.message,
    }));
  }

  private sleep(ms: number): Promise<void> {
    return new Promise((resolve) => {
      this.clock.setTimeout(resolve, ms);
    });
  }
}
