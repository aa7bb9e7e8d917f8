import type { RawResponse } from '../../kube/http.ts';
import { type HttpFormat, HttpSink, type HttpSinkOptions } from './http.ts';
import { type OtlpSource, otlpLog } from './otlp-log.ts';
import { CONTENT_TYPE, encode, type OtlpProtocol, parsePartialSuccess } from './otlp-wire.ts';

export interface OtlpSinkOptions extends Omit<HttpSinkOptions, 'url'> {
  /** The Collector's OTLP/HTTP base URL, e.g. http://otel-collector:4318; records go to <it>/v1/logs. */
  readonly endpoint: string;
  readonly protocol: OtlpProtocol;
  readonly source: OtlpSource;
}

const LOGS_PATH = '/v1/logs';

/**
 * Where logs are posted: the endpoint plus /v1/logs, as OTEL_EXPORTER_OTLP_ENDPOINT is read, unless the
 * path already ends in /v1/logs (the signal-specific form), so both spellings reach the same place.
 */
export function otlpLogsUrl(endpoint: string): URL {
  const url = new URL(endpoint);
  if (!url.pathname.endsWith(LOGS_PATH)) url.pathname = `${url.pathname.replace(/\/+$/, '')}${LOGS_PATH}`;
  return url;
}

/** OTLP/HTTP: 429, 502, 503 and 504 are worth a retry; any other 4xx or 5xx must not be retried. */
function retryable(status: number): boolean {
  return status === 429 || status === 502 || status === 503 || status === 504;
}

/**
 * A 2xx with partialSuccess.rejectedLogRecords > 0 stored nothing of the one record sent, so it is a
 * rejection (the spec forbids retrying it), never a success. A body that is not an export response
 * (a proxy's page) is one too.
 */
function refusal(res: RawResponse): string | undefined {
  try {
    const partial = parsePartialSuccess(res.headers['content-type'], res.bytes ?? Buffer.from(res.body));
    if (partial.rejected === 0) return undefined;
    return `rejected ${partial.rejected} log record(s)${partial.message ? `: ${partial.message}` : ''}`;
  } catch (err) {
    return `unreadable export response: ${(err as Error).message}`;
  }
}

/**
 * Sends every event as one OTLP log record (OTLP/HTTP, protobuf or JSON) to a Collector or any OTLP
 * logs endpoint, with the webhook's queue, retries and counters.
 */
export class OtlpSink extends HttpSink {
  constructor(opts: OtlpSinkOptions) {
    const { endpoint, protocol, source, ...http } = opts;
    const format: HttpFormat = {
      name: 'otlp',
      what: 'OTLP endpoint',
      contentType: CONTENT_TYPE[protocol],
      encode: (event) => encode(protocol, otlpLog(event, source, opts.clock.now())),
      retryable,
      refusal,
    };
    super({ ...http, url: otlpLogsUrl(endpoint).href }, format);
  }
}
