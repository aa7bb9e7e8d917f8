import type { Registry } from 'prom-client';
import { RetrySleeper } from '../../core/backoff.ts';
import type { Clock } from '../../core/clock.ts';
import { SinkError } from '../../core/errors.ts';
import type { Logger } from '../../core/logger.ts';
import { zeroed } from '../../core/metrics.ts';
import type { Broadcaster, Watcher } from './broadcaster.ts';
import { type CorrelatorOptions, EventCorrelator } from './correlator.ts';
import { type GiveUpReason, type RecorderMetrics, recorderMetrics } from './metrics.ts';
import { type Attempts, type Failure, type RetryableFailure, RetryPolicy } from './retry-policy.ts';
import type { EventPatch, EventSink, KubeEvent } from './types.ts';

export interface SinkLoopOptions {
  /** The event source, used as a metric label. */
  readonly source: string;
  readonly sink: EventSink;
  readonly clock: Clock;
  readonly registry: Registry;
  readonly logger: Logger;
  /** Uniform in [0, 1); jitters the first retry sleep. */
  readonly random?: () => number;
  readonly correlator?: Omit<CorrelatorOptions, 'clock'>;
  readonly sleepMs?: number;
  readonly maxTries?: number;
  readonly maxRetryAfterMs?: number;
  /**
   * How old an event may grow while the API server is unreachable and it is still retried, without
   * using up maxTries: DEFAULT_OUTAGE_HOLD_MS, the server's default --event-ttl. 0: client-go's budget.
   */
  readonly outageHoldMs?: number;
}

type Outcome = { readonly done: true } | { readonly done: false; readonly failure: RetryableFailure };

function isNotFound(err: unknown): boolean {
  return err instanceof SinkError && err.statusCode === 404;
}

function logFields(event: KubeEvent): Record<string, unknown> {
  return { event: event.name, namespace: event.namespace, reason: event.reason, count: event.count };
}

const GIVE_UP_MESSAGES: Record<Exclude<GiveUpReason, 'rejected'>, string> = {
  shutdown: 'Unable to write event (broadcaster is shut down)',
  retries_exhausted: 'Unable to write event (retry limit exceeded!)',
  expired: 'Unable to write event (API server unreachable until the event outlived its TTL there)',
};

/**
 * One API-sink watcher (client-go's StartRecordingToSink): its own correlator, events handled strictly one
 * at a time, 12 attempts per event. Error handling follows recordEvent: an HTTP status abandons the event,
 * a transport failure is retried. Deliberate deviations:
 * - a 429 or 5xx that carries Retry-After is retried after that delay (capped), standing in for the
 *   Retry-After loop in client-go's REST client, which @kubernetes/client-node lacks, stretched by up to
 *   25 % so agents told the same value spread out; it uses the same 12-attempt budget rather than a second;
 * - after giving an event up, the next waits out the sleep the abandoned one would have slept (holdOff);
 * - a transport failure (no HTTP status: the server is unreachable) does not use up the 12 attempts while
 *   the event is younger than outageHoldMs (1 h, the server's --event-ttl): client-go loses every event
 *   of an outage longer than its ~110 s of tries. The head keeps being tried every sleepMs, the events
 *   behind it wait in the watcher's bounded queue (1,000, drops counted), and past the hold the event is
 *   given up as `expired`, since the server would already have deleted it;
 * - an AlreadyExists answer to a create after an attempt of the same event failed without a definite
 *   answer (no status, or a 429/5xx retried) counts as written: the earlier try was stored (a 504 whose
 *   create went through), and the name is this agent's own. On a first attempt it stays a rejection;
 * - a 403 within a minute of the server being unreachable is retried for that minute: a restarted
 *   kube-apiserver refuses everyone until its RBAC informers sync (FORBIDDEN_AFTER_OUTAGE_MS).
 */
export class SinkLoop {
  readonly correlator: EventCorrelator;
  private readonly opts: SinkLoopOptions;
  private readonly metrics: RecorderMetrics;
  private readonly policy: RetryPolicy;
  private watcher: Watcher | undefined;
  private readonly sleeper: RetrySleeper;
  private flushing: Promise<void> | undefined;
  /** The event whose write is under way, so a grace period that ends mid-request still counts it. */
  private inFlight: KubeEvent | undefined;
  private abandoned: KubeEvent | undefined;
  /** When the wait after the last failed attempt ends: the next event, too, is not tried before. */
  private resumeAt = Number.NEGATIVE_INFINITY;

  constructor(opts: SinkLoopOptions) {
    this.opts = opts;
    this.metrics = recorderMetrics(opts.registry);
    zeroSinkSeries(this.metrics, opts.source);
    this.correlator = new EventCorrelator({ ...opts.correlator, clock: opts.clock });
    this.sleeper = new RetrySleeper(opts.clock);
    this.policy = new RetryPolicy({ ...opts, random: opts.random ?? Math.random });
  }

  attach(watcher: Watcher): void {
    this.watcher = watcher;
    zeroed(this.metrics.dropped, { point: 'flush', source: this.opts.source, watcher: watcher.name });
  }

  /** The watcher handler: correlate a copy, then write it with retries unless the spam filter skips it. */
  async recordToSink(incoming: KubeEvent): Promise<void> {
    const result = this.correlator.correlate({ ...incoming });
    if (result.aggregated) this.metrics.aggregated.inc({ source: this.opts.source });
    if (result.skip) {
      this.metrics.spamFiltered.inc({ source: this.opts.source });
      return;
    }
    this.inFlight = result.event;
    try {
      await this.writeWithRetry(result.event, result.patch);
    } finally {
      this.inFlight = undefined;
    }
  }

  /**
   * After shutdown every event still queued is tried once, with no sleeps, until the queue drains or
   * `graceMs` passes; whatever is still queued then is counted as dropped. A retry sleep in progress is
   * abandoned. The caller shuts the broadcaster down so the watcher can drain and end.
   */
  flush(graceMs: number): Promise<void> {
    if (this.flushing) return this.flushing;
    this.sleeper.stop();
    const watcher = this.watcher;
    if (!watcher) {
      this.flushing = Promise.resolve();
      return this.flushing;
    }
    this.flushing = new Promise<void>((resolve) => {
      const deadline = this.opts.clock.setTimeout(() => {
        this.dropLeftovers(watcher);
        resolve();
      }, graceMs);
      void watcher.done.then(() => {
        deadline.cancel();
        resolve();
      });
    });
    return this.flushing;
  }

  private dropLeftovers(watcher: Watcher): void {
    // The process exits after the grace period, so a request still open is as good as lost.
    if (this.inFlight) {
      this.giveUp('shutdown', this.inFlight);
      this.abandoned = this.inFlight;
    }
    const left = watcher.stop();
    if (left === 0) return;
    this.metrics.dropped.inc({ point: 'flush', source: this.opts.source, watcher: watcher.name }, left);
    this.opts.logger.warn(
      { source: this.opts.source, dropped: left },
      'Shutdown grace period over, dropping events not yet written',
    );
  }

  private async writeWithRetry(event: KubeEvent, patch: EventPatch | undefined): Promise<void> {
    if (!(await this.holdOff())) return this.giveUp('shutdown', event);
    const attempts: Attempts = { made: 0, charged: 0, unanswered: false };
    const started = this.opts.clock.hrtime();
    for (;;) {
      attempts.made++;
      const outcome = await this.attempt(event, patch, attempts);
      if (outcome.done) return;
      const decision = this.policy.afterFailure(attempts, outcome.failure, this.ageOf(event, started));
      this.resumeAt = this.opts.clock.now() + decision.delayMs;
      if (!decision.retry) return this.giveUp(decision.reason, event);
      if (!(await this.sleeper.sleep(decision.delayMs))) return this.giveUp('shutdown', event);
      this.metrics.retries.inc({ source: this.opts.source });
    }
  }

  /**
   * The event's age by its lastTimestamp, but never less than the monotonic time spent on it here: a
   * wall clock stepped back cannot stretch the hold.
   */
  private ageOf(event: KubeEvent, started: bigint): number {
    const { clock } = this.opts;
    return Math.max(clock.now() - event.lastTimestamp, Number(clock.hrtime() - started) / 1e6);
  }

  /**
   * client-go tries the next event at once after giving one up; against a server that just asked for
   * Retry-After (or is down) that is one request too early per abandoned event. Here the next event
   * waits out the sleep the abandoned one would have slept. Not while flushing: then each is tried once.
   */
  private holdOff(): Promise<boolean> {
    const wait = this.resumeAt - this.opts.clock.now();
    if (wait <= 0 || this.flushing) return Promise.resolve(true);
    return this.sleeper.sleep(wait);
  }

  private async attempt(
    event: KubeEvent,
    patch: EventPatch | undefined,
    attempts: Attempts,
  ): Promise<Outcome> {
    try {
      const written = await this.write(event, patch);
      this.correlator.updateState(written);
      return { done: true };
    } catch (err) {
      const failure = this.policy.classify(err, Number(this.opts.clock.hrtime() / 1_000_000n));
      if (failure.kind !== 'rejected') {
        this.logRetry(err, failure, event, attempts);
        return { done: false, failure };
      }
      if (failure.alreadyExists && attempts.unanswered) this.alreadyWritten(err, event);
      else this.reject(err, failure, event);
      return { done: true };
    }
  }

  /** PATCH a repeat; POST a first occurrence, or a repeat whose object has expired (404). */
  private async write(event: KubeEvent, patch: EventPatch | undefined): Promise<KubeEvent> {
    const { source, sink } = this.opts;
    if (event.count > 1 && patch) {
      try {
        const patched = await sink.patch(event, patch);
        this.metrics.written.inc({ source, verb: 'patch' });
        return patched;
      } catch (err) {
        if (!isNotFound(err)) throw err;
      }
    }
    const { resourceVersion: _stale, ...fresh } = event;
    const created = await sink.create(fresh);
    this.metrics.written.inc({ source, verb: 'create' });
    return created;
  }

  private logRetry(err: unknown, failure: RetryableFailure, event: KubeEvent, attempts: Attempts): void {
    const log = this.opts.logger;
    if (failure.kind === 'retry_after') {
      log.warn(
        { err, retryAfterMs: failure.ms, ...logFields(event) },
        'Server asked to retry event write later',
      );
    } else if (failure.kind === 'forbidden_after_outage') {
      log.warn(
        { err, ...logFields(event) },
        'Event refused right after an outage (may retry after sleeping)',
      );
    } else if (this.policy.holding(attempts)) {
      // Past client-go's 12 tries the outage is known and warned about; one line per 10 s adds nothing.
      log.debug(
        { err, attempt: attempts.made, ...logFields(event) },
        'API server still unreachable, holding event',
      );
    } else {
      log.warn({ err, ...logFields(event) }, 'Unable to write event (may retry after sleeping)');
    }
  }

  /**
   * The create of an earlier attempt was stored though its answer was lost (a 504, a reset after the
   * request went out): the server holds this very event, so it is written, as its POST, and later
   * repeats patch it.
   */
  private alreadyWritten(err: unknown, event: KubeEvent): void {
    const { resourceVersion: _unknown, ...local } = event;
    this.correlator.updateState(local);
    this.metrics.written.inc({ source: this.opts.source, verb: 'create' });
    this.opts.logger.debug(
      { err, ...logFields(event) },
      'Event already exists after an unanswered try: written',
    );
  }

  private reject(err: unknown, failure: Extract<Failure, { kind: 'rejected' }>, event: KubeEvent): void {
    const fields = { err, ...logFields(event) };
    if (failure.alreadyExists) this.opts.logger.debug(fields, 'Server rejected event (will not retry!)');
    else this.opts.logger.error(fields, 'Server rejected event (will not retry!)');
    this.metrics.givenUp.inc({ source: this.opts.source, reason: 'rejected' });
  }

  private giveUp(reason: Exclude<GiveUpReason, 'rejected'>, event: KubeEvent): void {
    if (event === this.abandoned) return;
    this.metrics.givenUp.inc({ source: this.opts.source, reason });
    this.opts.logger.error(logFields(event), GIVE_UP_MESSAGES[reason]);
  }
}

/** Hangs a sink loop off `broadcaster` as a watcher named `watcherName`. */
export function startRecordingToSink(
  broadcaster: Broadcaster<KubeEvent>,
  opts: SinkLoopOptions,
  watcherName = 'api',
): SinkLoop {
  const loop = new SinkLoop(opts);
  loop.attach(broadcaster.watch(watcherName, (event) => loop.recordToSink(event)));
  return loop;
}

/** Everything the API sink of one source counts, at 0 from the start. */
function zeroSinkSeries(m: RecorderMetrics, source: string): void {
  zeroed(m.written, { source, verb: 'create' }, { source, verb: 'patch' });
  zeroed(m.retries, { source });
  zeroed(m.aggregated, { source });
  zeroed(m.spamFiltered, { source });
  const reasons: GiveUpReason[] = ['retries_exhausted', 'expired', 'rejected', 'shutdown'];
  zeroed(m.givenUp, ...reasons.map((reason) => ({ source, reason })));
}
