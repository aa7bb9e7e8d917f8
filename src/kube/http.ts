import http from 'node:http';
import type * as Https from 'node:https';
import { builtin } from '../core/builtin.ts';
import type { Clock } from '../core/clock.ts';
import type { ApiConnection } from './connection.ts';

/**
 * The largest response body read. The agent reads single Nodes and Events, never lists; etcd stores
 * objects up to 1.5 MiB by default (--max-request-bytes), well under this even as JSON. A bigger body
 * means something is wrong upstream: the request is cut off there and fails like a transport error.
 */
export const MAX_BODY_BYTES = 4 * 1024 * 1024;

export interface RawResponse {
  readonly status: number;
  readonly headers: http.IncomingHttpHeaders;
  readonly body: string;
  /** The body as received, for binary answers (protobuf); fakes may leave it out. */
  readonly bytes?: Buffer;
}

export interface RawRequest {
  readonly method: string;
  readonly url: URL;
  readonly headers: Record<string, string>;
  readonly body: Buffer | undefined;
  readonly timeoutMs: number;
}

/** One keep-alive agent per connection, carrying the cluster CA, client certificate and TLS policy. */
export function createAgent(conn: ApiConnection): http.Agent {
  if (!conn.server.startsWith('https:')) return new http.Agent({ keepAlive: true, maxSockets: 8 });
  const { tls } = conn;
  return new (builtin<typeof Https>('node:https').Agent)({
    keepAlive: true,
    maxSockets: 8,
    ca: tls.insecureSkipTLSVerify ? undefined : tls.ca,
    cert: tls.cert,
    key: tls.key,
    rejectUnauthorized: !tls.insecureSkipTLSVerify,
    servername: tls.serverName,
  });
}

export class TimeoutError extends Error {
  constructor(ms: number) {
    super(`request timed out after ${ms}ms`);
    this.name = 'TimeoutError';
  }
}

/** Buffers a response body, aborting the request when the body outgrows MAX_BODY_BYTES. */
function collect(
  request: http.ClientRequest,
  res: http.IncomingMessage,
  done: (r: RawResponse) => void,
  fail: (err: Error) => void,
): void {
  const chunks: Buffer[] = [];
  let size = 0;
  res.on('data', (chunk: Buffer) => {
    size += chunk.length;
    if (size > MAX_BODY_BYTES) request.destroy(new Error(`response body over ${MAX_BODY_BYTES} bytes`));
    else chunks.push(chunk);
  });
  res.on('error', fail);
  res.on('end', () => {
    const bytes = Buffer.concat(chunks);
    done({ status: res.statusCode ?? 0, headers: res.headers, body: bytes.toString('utf8'), bytes });
  });
  // A destroyed request may end the response without 'end' or 'error'; never leave the caller hanging.
  res.on('close', () => fail(new Error('connection closed before the response ended')));
}

/**
 * Sends one request and buffers the response. The deadline covers connect, headers and body, and runs on
 * the injected clock so tests can expire it without sleeping. Rejects only on transport failures.
 */
export function send(agent: http.Agent, req: RawRequest, clock: Clock): Promise<RawResponse> {
  const mod = req.url.protocol === 'https:' ? builtin<typeof Https>('node:https') : http;
  return new Promise<RawResponse>((resolve, reject) => {
    const request = mod.request(req.url, { method: req.method, headers: req.headers, agent });
    let settled = false;
    let timedOut: TimeoutError | undefined;
    const timer = clock.setTimeout(() => {
      timedOut = new TimeoutError(req.timeoutMs);
      request.destroy(timedOut);
    }, req.timeoutMs);
    const settle = (outcome: () => void) => {
      timer.cancel();
      if (!settled) outcome();
      settled = true;
    };
    // Whichever stream reports first, a deadline we enforced is reported as the timeout it is.
    const fail = (err: Error) => settle(() => reject(timedOut ?? err));
    request.on('error', fail);
    request.on('response', (res) => collect(request, res, (r) => settle(() => resolve(r)), fail));
    request.end(req.body);
  });
}
