import { type HttpFormat, HttpSink, type HttpSinkOptions } from './http.ts';
import { persistedEvent } from './record.ts';

export interface WebhookSinkOptions extends HttpSinkOptions {
  /** The `nodeName` field of every body. */
  readonly nodeName: string;
}

/** 408 and 429 say "not now"; 5xx says the receiver is in trouble. Anything else will not change. */
function retryable(status: number): boolean {
  return status === 408 || status === 429 || status >= 500;
}

/**
 * POSTs each event, one per request, as its core/v1 JSON (any 2xx is delivered, the body is ignored).
 * Transport failures, timeouts, 408, 429 and 5xx are retried; any other status gives the event up.
 */
export class WebhookSink extends HttpSink {
  constructor(opts: WebhookSinkOptions) {
    const { nodeName, ...http } = opts;
    const format: HttpFormat = {
      name: 'webhook',
      what: 'webhook',
      contentType: 'application/json',
      encode: (event) => Buffer.from(JSON.stringify(persistedEvent(event, nodeName))),
      retryable,
    };
    super(http, format);
  }
}
