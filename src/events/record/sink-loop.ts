import type { Registry } from 'prom-client';
import { RetrySleeper } from '../../core/backoff.ts';
import type { Clock } from '../../core/clock.ts';
import { retryAfterMs, SinkError } from '../../core/errors.ts';
import type { Logger } from '../../core/logger.ts';
import { zeroed } from '../../core/metrics.ts';
import { jitterUp } from '../../kube/backoff.ts';
import type { Broadcaster, Watcher } from './broadcaster.ts';
import { type CorrelatorOptions, EventCorrelator } from './correlator.ts';
import { type GiveUpReason, type RecorderMetrics, recorderMetrics } from './metrics.ts';
import type { EventPatch, EventSink, KubeEvent } from './types.ts';

/** tools/record's maxTriesPerEvent: attempts in total, so at most 11 sleeps. */
export const MAX_TRIES_PER_EVENT = 12;
export const DEFAULT_SLEEP_MS = 10_000;
/** Caps a server's Retry-After so one event cannot hold the head of the line for long. */
export const DEFAULT_MAX_RETRY_AFTER_MS = 60_000;
/**
 * A Retry-After wait is stretched by up to 25 % (events.k8s.io's broadcaster jitters its sleeps by the
 * same factor, wait.Jitter(10 s, 0.25)): APF tells every agent it rejected in one second the same value,
 * and they should not all come back in one second too.
 */
export const RETRY_AFTER_JITTER = 0.25;

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
}

type Outcome = { readonly done: true } | { readonly done: false; readonly retryAfterMs?: number };

function isNotFound(err: unknown): boolean {
  return err instanceof SinkError && err.statusCode === 404;
}

function logFields(event: KubeEvent): Record<string, unknown> {
  return { event: event.name, namespace: event.namespace, reason: event.reason, count: event.count };
}

/**
 * One API-sink watcher (client-go's StartRecordingToSink): its own correlator, events handled strictly one
 * at a time, 12 attempts per event. Error handling follows recordEvent: an HTTP status abandons the event,
 * a transport failure is retried. One deliberate deviation: a 429 or 5xx that carries Retry-After is
 * retried after that delay (capped), standing in for the Retry-After loop in client-go's REST client,
 * which @kubernetes/client-node lacks, stretched by up to 25 % so agents told the same value spread out;
 * it uses the same 12-attempt budget rather than a second one.
 */
export class SinkLoop {
  readonly correlator: EventCorrelator;
  private readonly opts: SinkLoopOptions;
  private readonly metrics: RecorderMetrics;
  private readonly random: () => number;
  private readonly sleepMs: number;
  private readonly maxTries: number;
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
    this.random = opts.random ?? Math.random;
    this.sleeper = new RetrySleeper(opts.clock);
    this.sleepMs = opts.sleepMs ?? DEFAULT_SLEEP_MS;
    this.maxTries = opts.maxTries ?? MAX_TRIES_PER_EVENT;
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
    for (let tries = 1; ; tries++) {
      const outcome = await this.attempt(event, patch);
      if (outcome.done) return;
      const delay = this.delayAfter(tries, outcome.retryAfterMs);
      this.resumeAt = this.opts.clock.now() + delay;
      if (tries >= this.maxTries) return this.giveUp('retries_exhausted', event);
      if (!(await this.sleeper.sleep(delay))) return this.giveUp('shutdown', event);
      this.metrics.retries.inc({ source: this.opts.source });
    }
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

  private delayAfter(tries: number, retryAfterMs: number | undefined): number {
    if (retryAfterMs !== undefined) {
      const capped = Math.min(retryAfterMs, this.opts.maxRetryAfterMs ?? DEFAULT_MAX_RETRY_AFTER_MS);
      return jitterUp(capped, RETRY_AFTER_JITTER, this.random);
    }
    return tries === 1 ? this.sleepMs * this.random() : this.sleepMs;
  }

  private async attempt(event: KubeEvent, patch: EventPatch | undefined): Promise<Outcome> {
    try {
      const written = await this.write(event, patch);
      this.correlator.updateState(written);
      return { done: true };
    } catch (err) {
      return this.classify(err, event);
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

  private classify(err: unknown, event: KubeEvent): Outcome {
    const log = this.opts.logger;
    if (!(err instanceof SinkError) || err.statusCode === undefined) {
      log.warn({ err, ...logFields(event) }, 'Unable to write event (may retry after sleeping)');
      return { done: false };
    }
    const wait = retryAfterMs(err);
    if (wait !== undefined && (err.statusCode === 429 || err.statusCode >= 500)) {
      log.warn({ err, retryAfterMs: wait, ...logFields(event) }, 'Server asked to retry event write later');
      return { done: false, retryAfterMs: wait };
    }
    if (err.reason === 'AlreadyExists') {
      log.debug({ err, ...logFields(event) }, 'Server rejected event (will not retry!)');
    } else {
      log.error({ err, ...logFields(event) }, 'Server rejected event (will not retry!)');
    }
    this.metrics.givenUp.inc({ source: this.opts.source, reason: 'rejected' });
    return { done: true };
  }

  private giveUp(reason: Exclude<GiveUpReason, 'rejected'>, event: KubeEvent): void {
    if (event === this.abandoned) return;
    this.metrics.givenUp.inc({ source: this.opts.source, reason });
    const msg =
      reason === 'shutdown'
        ? 'Unable to write event (broadcaster is shut down)'
        : 'Unable to write event (retry limit exceeded!)';
    this.opts.logger.error(logFields(event), msg);
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
  const reasons: GiveUpReason[] = ['retries_exhausted', 'rejected', 'shutdown'];
  zeroed(m.givenUp, ...reasons.map((reason) => ({ source, reason })));
}
