import { retryAfterMs, SinkError } from '../../core/errors.ts';
import { jitterUp } from '../../kube/backoff.ts';

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
/**
 * How long an event is kept retrying while the API server is unreachable: kube-apiserver's default
 * --event-ttl (1 h). Past that the server would already have deleted the event, so it is worth nothing
 * there; before it, it is what an operator reads after the outage, which client-go's ~110 s of tries lost.
 */
export const DEFAULT_OUTAGE_HOLD_MS = 3_600_000;
/**
 * How long after the API server last went unanswered a 403 is taken for a restarting server rather than a
 * refusal. A kube-apiserver that has just started serves requests before its RBAC authorizer's informers
 * have synced and answers 403 to everyone meanwhile: issue 41's fleet outage lost 61 of 1,000 events that
 * way, refused in the seconds after the restart. Within this window such a 403 is retried every sleep
 * (10 s), charged to the 12 tries, so a real refusal costs at most 7 more requests and is then given up
 * as client-go does.
 */
export const FORBIDDEN_AFTER_OUTAGE_MS = 60_000;

/**
 * What a failed attempt said, as client-go's recordEvent reads it:
 * - unreachable: no HTTP status (refused, reset, timed out): retried
 * - retry_after: a 429 or 5xx carrying Retry-After: retried after that delay
 * - forbidden_after_outage: a 403 soon after the server was unreachable: retried (RetryPolicy.classify)
 * - rejected: any other status: abandoned (AlreadyExists noted, it may be an earlier attempt's object)
 */
export type Failure =
  | { readonly kind: 'unreachable' }
  | { readonly kind: 'retry_after'; readonly ms: number }
  | { readonly kind: 'forbidden_after_outage' }
  | { readonly kind: 'rejected'; readonly alreadyExists: boolean };

export type RetryableFailure = Exclude<Failure, { kind: 'rejected' }>;

function classify(err: unknown): Failure {
  if (!(err instanceof SinkError) || err.statusCode === undefined) return { kind: 'unreachable' };
  const wait = retryAfterMs(err);
  if (wait !== undefined && (err.statusCode === 429 || err.statusCode >= 500)) {
    return { kind: 'retry_after', ms: wait };
  }
  return { kind: 'rejected', alreadyExists: err.reason === 'AlreadyExists' };
}

/** One event's attempts so far; the sink loop makes one per event and the policy updates it. */
export interface Attempts {
  /** Attempts made, the one that just failed included. */
  made: number;
  /** Attempts charged to the budget: all but unreachable ones while the event is within the hold. */
  charged: number;
  /**
   * An attempt failed without a definite answer and was retried (no status, or a 5xx or 429 retry): the
   * server may have stored the event anyway, so a later AlreadyExists is this event's own object.
   */
  unanswered: boolean;
}

export type Decision =
  | { readonly retry: true; readonly delayMs: number }
  | { readonly retry: false; readonly delayMs: number; readonly reason: 'retries_exhausted' | 'expired' };

export interface RetryPolicyOptions {
  readonly random: () => number;
  readonly sleepMs?: number;
  readonly maxTries?: number;
  readonly maxRetryAfterMs?: number;
  /** 0 turns the hold off: unreachable attempts are charged as in client-go. */
  readonly outageHoldMs?: number;
}

/** The retry budget and sleeps of the API sink loop; see SinkLoop for how they deviate from client-go. */
export class RetryPolicy {
  private readonly random: () => number;
  private readonly sleepMs: number;
  private readonly maxTries: number;
  private readonly maxRetryAfterMs: number;
  private readonly holdMs: number;
  /** When an attempt last failed without an HTTP status (the server unreachable), in monotonic ms. */
  private lastUnreachableAt = Number.NEGATIVE_INFINITY;

  constructor(opts: RetryPolicyOptions) {
    this.random = opts.random;
    this.sleepMs = opts.sleepMs ?? DEFAULT_SLEEP_MS;
    this.maxTries = opts.maxTries ?? MAX_TRIES_PER_EVENT;
    this.maxRetryAfterMs = opts.maxRetryAfterMs ?? DEFAULT_MAX_RETRY_AFTER_MS;
    this.holdMs = opts.outageHoldMs ?? DEFAULT_OUTAGE_HOLD_MS;
  }

  /** classify(), with the sink's recent past: a 403 right after an outage is retried (see the window). */
  classify(err: unknown, now: number): Failure {
    const failure = classify(err);
    if (failure.kind === 'unreachable') this.lastUnreachableAt = now;
    // Off with the hold (outageHoldMs 0): then the sink answers as client-go does.
    const forbidden = this.holdMs > 0 && err instanceof SinkError && err.statusCode === 403;
    if (forbidden && now - this.lastUnreachableAt <= FORBIDDEN_AFTER_OUTAGE_MS) {
      return { kind: 'forbidden_after_outage' };
    }
    return failure;
  }

  /**
   * After a retryable failure: retry after `delayMs`, or give up. `ageMs` is how old the event is. The
   * delay is returned either way: the next event waits it out too (SinkLoop.holdOff).
   */
  afterFailure(attempts: Attempts, failure: RetryableFailure, ageMs: number): Decision {
    // A 403 is a definite answer: nothing was stored, so a later AlreadyExists is not this event's.
    if (failure.kind !== 'forbidden_after_outage') attempts.unanswered = true;
    const delayMs = this.delay(attempts.made, failure);
    if (failure.kind === 'unreachable' && this.holdMs > 0) {
      // An unreachable server answers nothing about the event: waiting costs it no request, so only
      // the event's worth (its age against the server's TTL) ends the wait.
      if (ageMs >= this.holdMs) return { retry: false, delayMs, reason: 'expired' };
      return { retry: true, delayMs };
    }
    attempts.charged++;
    if (attempts.charged >= this.maxTries) return { retry: false, delayMs, reason: 'retries_exhausted' };
    return { retry: true, delayMs };
  }

  /** Beyond client-go's 12 tries the loop is holding an event through an outage. */
  holding(attempts: Attempts): boolean {
    return attempts.made > this.maxTries;
  }

  private delay(made: number, failure: RetryableFailure): number {
    if (failure.kind === 'retry_after') {
      return jitterUp(Math.min(failure.ms, this.maxRetryAfterMs), RETRY_AFTER_JITTER, this.random);
    }
    return made === 1 ? this.sleepMs * this.random() : this.sleepMs;
  }
}
