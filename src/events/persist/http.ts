import http from 'node:http';
import type * as Https from 'node:https';
import type { Registry } from 'prom-client';
import { parseRetryAfter } from '../../kube/errors.ts';
import { type RawRequest, type RawResponse, send } from '../../kube/http.ts';
import type { KubeEvent } from '../record/types.ts';
import { backoffMs, RetrySleeper } from '../../core/backoff.ts';
import { builtin } from '../../core/builtin.ts';
import type { Clock } from '../../core/clock.ts';
import type { Logger } from '../../core/logger.ts';
import { OutageLog, type SinkMetrics, sinkMetrics } from './metrics.ts';
import type { PersistSink } from './watcher.ts';

/** Sends one request; rejects only on transport failures (timeouts included). Injectable for tests. */
export type Transport = (req: RawRequest) => Promise<RawResponse>;

export const HTTP_SINK_DEFAULTS = {
  timeoutMs: 10_000,
  maxTries: 5,
  baseDelayMs: 1_000,
  maxDelayMs: 30_000,
  maxRetryAfterMs: 60_000,
} as const;

/** TLS for https:// receivers; Node's CA bundle when neither is set. */
export interface SinkTls {
  /** PEM CA certificates that replace Node's bundle for this receiver. */
  readonly ca?: string;
  readonly insecureSkipVerify?: boolean;
}

export interface HttpSinkOptions {
  readonly url: string;
  /** Sent with every request, e.g. Authorization. Values are never logged. */
  readonly headers?: Readonly<Record<string, string>>;
  readonly clock: Clock;
  readonly registry: Registry;
  readonly logger: Logger;
  /** Uniform in [0, 1), for backoff jitter. */
  readonly random?: () => number;
  readonly transport?: Transport;
  readonly tls?: SinkTls;
  readonly timeoutMs?: number;
  /** Attempts per event in total, the first included. */
  readonly maxTries?: number;
  readonly baseDelayMs?: number;
  readonly maxDelayMs?: number;
  /** Caps a receiver's Retry-After so one event cannot hold its source's queue for long. */
  readonly maxRetryAfterMs?: number;
}

/** What differs between HTTP receivers: the body, which statuses are worth a retry, what a 2xx means. */
export interface HttpFormat {
  /** Watcher name and `sink` metric label. */
  readonly name: string;
  /** How log lines call the receiver. */
  readonly what: string;
  readonly contentType: string;
  encode(event: KubeEvent): Buffer;
  retryable(status: number): boolean;
  /** Why a 2xx answer still refused the event for good, or undefined when it was accepted. */
  refusal?(res: RawResponse): string | undefined;
}

type Attempt =
  | { readonly kind: 'ok' }
  | { readonly kind: 'retry'; readonly retryAfterMs?: number }
  | { readonly kind: 'rejected'; readonly why: string };

/** The URL without credentials or query string, which may carry tokens. */
export function safeUrl(url: URL): string {
  return `${url.origin}${url.pathname}`;
}

function defaultTransport(
  url: URL,
  clock: Clock,
  tls: SinkTls = {},
): { transport: Transport; close: () => void } {
  const agent =
    url.protocol === 'https:'
      ? new (builtin<typeof Https>('node:https').Agent)({
          keepAlive: true,
          maxSockets: 4,
          ca: tls.insecureSkipVerify ? undefined : tls.ca,
          rejectUnauthorized: !tls.insecureSkipVerify,
        })
      : new http.Agent({ keepAlive: true, maxSockets: 4 });
  return { transport: (req) => send(agent, req, clock), close: () => agent.destroy() };
}

/**
 * POSTs each event, one per request, in the body `format` encodes. Transport failures, timeouts and the
 * statuses the format calls retryable are retried with capped exponential backoff and jitter (or after
 * Retry-After, when the receiver sends one) up to maxTries attempts; any other status, and a 2xx the
 * format refuses, gives the event up at once.
 */
export class HttpSink implements PersistSink {
  readonly name: string;
  private readonly opts: HttpSinkOptions;
  private readonly format: HttpFormat;
  private readonly url: URL;
  private readonly transport: Transport;
  private readonly closeTransport: () => void;
  private readonly metrics: SinkMetrics;
  private readonly outage: OutageLog;
  private readonly random: () => number;
  private readonly maxTries: number;
  private readonly sleeper: RetrySleeper;

  constructor(opts: HttpSinkOptions, format: HttpFormat) {
    this.opts = opts;
    this.format = format;
    this.name = format.name;
    this.url = new URL(opts.url);
    const own = opts.transport
      ? { transport: opts.transport, close: () => {} }
      : defaultTransport(this.url, opts.clock, opts.tls);
    this.transport = own.transport;
    this.closeTransport = own.close;
    this.metrics = sinkMetrics(opts.registry, this.name);
    this.outage = new OutageLog(opts.logger, { sink: this.name, url: safeUrl(this.url) });
    this.random = opts.random ?? Math.random;
    this.sleeper = new RetrySleeper(opts.clock);
    this.maxTries = Math.max(1, opts.maxTries ?? HTTP_SINK_DEFAULTS.maxTries);
  }

  async write(event: KubeEvent): Promise<void> {
    const body = this.encode(event);
    if (body === undefined) return this.giveUp(event, 'cannot encode');
    for (let tries = 1; ; tries++) {
      const outcome = await this.attempt(body);
      if (outcome.kind === 'ok') return;
      if (outcome.kind === 'rejected') return this.giveUp(event, outcome.why);
      if (tries >= this.maxTries) return this.giveUp(event, 'retry limit reached');
      if (!(await this.sleeper.sleep(this.delayAfter(tries, outcome.retryAfterMs)))) {
        return this.giveUp(event, 'shutting down');
      }
      this.metrics.retries.inc({ sink: this.name });
    }
  }

  stopRetrying(): void {
    this.sleeper.stop();
  }

  async close(): Promise<void> {
    this.stopRetrying();
    this.closeTransport();
  }

  /** Backoff doubles from baseDelayMs up to maxDelayMs; the upper half of each step is random. */
  delayAfter(tries: number, retryAfterMs: number | undefined): number {
    if (retryAfterMs !== undefined) {
      return Math.min(retryAfterMs, this.opts.maxRetryAfterMs ?? HTTP_SINK_DEFAULTS.maxRetryAfterMs);
    }
    const base = this.opts.baseDelayMs ?? HTTP_SINK_DEFAULTS.baseDelayMs;
    const max = this.opts.maxDelayMs ?? HTTP_SINK_DEFAULTS.maxDelayMs;
    const step = backoffMs(tries, base, max);
    return step / 2 + (step / 2) * this.random();
  }

  private headersFor(body: Buffer): Record<string, string> {
    return {
      'content-type': this.format.contentType,
      'content-length': String(body.length),
      ...this.opts.headers,
    };
  }

  private async attempt(body: Buffer): Promise<Attempt> {
    let res: RawResponse;
    try {
      res = await this.transport({
        method: 'POST',
        url: this.url,
        headers: this.headersFor(body),
        body,
        timeoutMs: this.opts.timeoutMs ?? HTTP_SINK_DEFAULTS.timeoutMs,
      });
    } catch (err) {
      this.metrics.writes.inc({ sink: this.name, result: 'failure' });
      this.outage.failed(
        { err: (err as Error).message },
        `Unable to POST event to ${this.format.what} (will retry)`,
      );
      return { kind: 'retry' };
    }
    return this.interpret(res);
  }

  private interpret(res: RawResponse): Attempt {
    if (res.status >= 200 && res.status <= 299) return this.accepted(res);
    if (!this.format.retryable(res.status))
      return this.rejected({ status: res.status }, `answered ${res.status}`);
    this.metrics.writes.inc({ sink: this.name, result: 'failure' });
    this.outage.failed({ status: res.status }, `${this.format.what} refused event for now (will retry)`);
    const header = res.headers['retry-after'];
    const retryAfterMs = parseRetryAfter(Array.isArray(header) ? header[0] : header, this.opts.clock.now());
    return retryAfterMs === undefined ? { kind: 'retry' } : { kind: 'retry', retryAfterMs };
  }

  private accepted(res: RawResponse): Attempt {
    const refusal = this.format.refusal?.(res);
    if (refusal !== undefined) return this.rejected({ status: res.status, refusal }, refusal);
    this.metrics.writes.inc({ sink: this.name, result: 'success' });
    this.outage.succeeded();
    return { kind: 'ok' };
  }

  private rejected(detail: Record<string, unknown>, why: string): Attempt {
    this.metrics.writes.inc({ sink: this.name, result: 'rejected' });
    this.outage.failed(detail, `${this.format.what} rejected event (will not retry)`);
    return { kind: 'rejected', why };
  }

  /** An event the format cannot encode is given up (counted), never thrown at the watcher. */
  private encode(event: KubeEvent): Buffer | undefined {
    try {
      return this.format.encode(event);
    } catch (err) {
      this.opts.logger.warn(
        { sink: this.name, event: event.name, reason: event.reason, err: String(err) },
        `cannot encode event for ${this.format.what}; giving it up`,
      );
      return undefined;
    }
  }

  private giveUp(event: KubeEvent, why: string): void {
    this.metrics.givenUp.inc({ sink: this.name });
    this.opts.logger.debug(
      { sink: this.name, url: safeUrl(this.url), event: event.name, reason: event.reason, why },
      `Gave up persisting event to ${this.format.what}`,
    );
  }
}
