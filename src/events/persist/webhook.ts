import http from 'node:http';
import type * as Https from 'node:https';
import type { Registry } from 'prom-client';
import { builtin } from '../../core/builtin.ts';
import type { Clock } from '../../core/clock.ts';
import type { Logger } from '../../core/logger.ts';
import { parseRetryAfter } from '../../kube/errors.ts';
import { type RawRequest, type RawResponse, send } from '../../kube/http.ts';
import type { KubeEvent } from '../record/types.ts';
import { OutageLog, type SinkMetrics, sinkMetrics } from './metrics.ts';
import { persistedEvent } from './record.ts';
import type { PersistSink } from './watcher.ts';

/** Sends one request; rejects only on transport failures (timeouts included). Injectable for tests. */
export type Transport = (req: RawRequest) => Promise<RawResponse>;

export const WEBHOOK_DEFAULTS = {
  timeoutMs: 10_000,
  maxTries: 5,
  baseDelayMs: 1_000,
  maxDelayMs: 30_000,
  maxRetryAfterMs: 60_000,
} as const;

export interface WebhookSinkOptions {
  readonly url: string;
  /** Sent with every request, e.g. Authorization. Values are never logged. */
  readonly headers?: Readonly<Record<string, string>>;
  /** The `nodeName` field of every body. */
  readonly nodeName: string;
  readonly clock: Clock;
  readonly registry: Registry;
  readonly logger: Logger;
  /** Uniform in [0, 1), for backoff jitter. */
  readonly random?: () => number;
  readonly transport?: Transport;
  readonly timeoutMs?: number;
  /** Attempts per event in total, the first included. */
  readonly maxTries?: number;
  readonly baseDelayMs?: number;
  readonly maxDelayMs?: number;
  /** Caps a receiver's Retry-After so one event cannot hold its source's queue for long. */
  readonly maxRetryAfterMs?: number;
}

type Attempt =
  | { readonly kind: 'ok' }
  | { readonly kind: 'retry'; readonly retryAfterMs?: number }
  | { readonly kind: 'rejected'; readonly status: number };

/** 408 and 429 say "not now"; 5xx says the receiver is in trouble. Anything else will not change. */
function retryable(status: number): boolean {
  return status === 408 || status === 429 || status >= 500;
}

/** The URL without credentials or query string, which may carry tokens. */
export function safeUrl(url: URL): string {
  return `${url.origin}${url.pathname}`;
}

function defaultTransport(url: URL, clock: Clock): { transport: Transport; close: () => void } {
  const agent =
    url.protocol === 'https:'
      ? new (builtin<typeof Https>('node:https').Agent)({ keepAlive: true, maxSockets: 4 })
      : new http.Agent({ keepAlive: true, maxSockets: 4 });
  return { transport: (req) => send(agent, req, clock), close: () => agent.destroy() };
}

/**
 * POSTs each event, one per request, as its core/v1 JSON. Transport failures, timeouts, 408, 429 and 5xx
 * are retried with capped exponential backoff and jitter (or after Retry-After, when the receiver sends
 * one) up to maxTries attempts; any other status gives the event up at once.
 */
export class WebhookSink implements PersistSink {
  readonly name = 'webhook';
  private readonly opts: WebhookSinkOptions;
  private readonly url: URL;
  private readonly transport: Transport;
  private readonly closeTransport: () => void;
  private readonly metrics: SinkMetrics;
  private readonly outage: OutageLog;
  private readonly random: () => number;
  private readonly maxTries: number;
  private readonly sleeps = new Set<() => void>();
  private retrying = true;

  constructor(opts: WebhookSinkOptions) {
    this.opts = opts;
    this.url = new URL(opts.url);
    const own = opts.transport
      ? { transport: opts.transport, close: () => {} }
      : defaultTransport(this.url, opts.clock);
    this.transport = own.transport;
    this.closeTransport = own.close;
    this.metrics = sinkMetrics(opts.registry);
    this.outage = new OutageLog(opts.logger, { sink: this.name, url: safeUrl(this.url) });
    this.random = opts.random ?? Math.random;
    this.maxTries = Math.max(1, opts.maxTries ?? WEBHOOK_DEFAULTS.maxTries);
  }

  async write(event: KubeEvent): Promise<void> {
    const body = Buffer.from(JSON.stringify(persistedEvent(event, this.opts.nodeName)));
    for (let tries = 1; ; tries++) {
      const outcome = await this.attempt(body);
      if (outcome.kind === 'ok') return;
      if (outcome.kind === 'rejected') return this.giveUp(event, `receiver answered ${outcome.status}`);
      if (tries >= this.maxTries) return this.giveUp(event, 'retry limit reached');
      if (!(await this.sleep(this.delayAfter(tries, outcome.retryAfterMs)))) {
        return this.giveUp(event, 'shutting down');
      }
      this.metrics.retries.inc({ sink: this.name });
    }
  }

  stopRetrying(): void {
    this.retrying = false;
    for (const wake of [...this.sleeps]) wake();
  }

  async close(): Promise<void> {
    this.stopRetrying();
    this.closeTransport();
  }

  /** Backoff doubles from baseDelayMs up to maxDelayMs; the upper half of each step is random. */
  delayAfter(tries: number, retryAfterMs: number | undefined): number {
    if (retryAfterMs !== undefined) {
      return Math.min(retryAfterMs, this.opts.maxRetryAfterMs ?? WEBHOOK_DEFAULTS.maxRetryAfterMs);
    }
    const base = this.opts.baseDelayMs ?? WEBHOOK_DEFAULTS.baseDelayMs;
    const max = this.opts.maxDelayMs ?? WEBHOOK_DEFAULTS.maxDelayMs;
    const step = Math.min(max, base * 2 ** (tries - 1));
    return step / 2 + (step / 2) * this.random();
  }

  private headersFor(body: Buffer): Record<string, string> {
    return {
      'content-type': 'application/json',
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
        timeoutMs: this.opts.timeoutMs ?? WEBHOOK_DEFAULTS.timeoutMs,
      });
    } catch (err) {
      this.metrics.writes.inc({ sink: this.name, result: 'failure' });
      this.outage.failed({ err: (err as Error).message }, 'Unable to POST event to webhook (will retry)');
      return { kind: 'retry' };
    }
    return this.interpret(res);
  }

  private interpret(res: RawResponse): Attempt {
    if (res.status >= 200 && res.status <= 299) {
      this.metrics.writes.inc({ sink: this.name, result: 'success' });
      this.outage.succeeded();
      return { kind: 'ok' };
    }
    if (!retryable(res.status)) {
      this.metrics.writes.inc({ sink: this.name, result: 'rejected' });
      this.outage.failed({ status: res.status }, 'Webhook rejected event (will not retry)');
      return { kind: 'rejected', status: res.status };
    }
    this.metrics.writes.inc({ sink: this.name, result: 'failure' });
    this.outage.failed({ status: res.status }, 'Webhook refused event for now (will retry)');
    const header = res.headers['retry-after'];
    const retryAfterMs = parseRetryAfter(Array.isArray(header) ? header[0] : header, this.opts.clock.now());
    return retryAfterMs === undefined ? { kind: 'retry' } : { kind: 'retry', retryAfterMs };
  }

  private giveUp(event: KubeEvent, why: string): void {
    this.metrics.givenUp.inc({ sink: this.name });
    this.opts.logger.debug(
      { sink: this.name, url: safeUrl(this.url), event: event.name, reason: event.reason, why },
      'Gave up persisting event to webhook',
    );
  }

  /** Resolves true when the delay elapsed, false when shutdown cut it short. */
  private sleep(ms: number): Promise<boolean> {
    if (!this.retrying) return Promise.resolve(false);
    return new Promise((resolve) => {
      const wake = () => {
        timer.cancel();
        this.sleeps.delete(wake);
        resolve(false);
      };
      const timer = this.opts.clock.setTimeout(() => {
        this.sleeps.delete(wake);
        resolve(true);
      }, ms);
      this.sleeps.add(wake);
    });
  }
}
