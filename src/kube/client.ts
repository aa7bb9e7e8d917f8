import type http from 'node:http';
import type { Counter, Histogram, Registry } from 'prom-client';
import { type Clock, systemClock, type TimerHandle } from '../core/clock.ts';
import type { Logger } from '../core/logger.ts';
import { counter, histogram, zeroed } from '../core/metrics.ts';
import type { ApiConnection } from './connection.ts';
import { ApiError, parseRetryAfter, statusDetails } from './errors.ts';
import { CREDENTIAL_FAILURES, CredentialError } from './exec-credential.ts';
import { createAgent, type RawResponse, send, TimeoutError } from './http.ts';
import { RateLimiter } from './rate-limiter.ts';

export const DEFAULT_REQUEST_TIMEOUT_MS = 10_000;
export const STRATEGIC_MERGE_PATCH = 'application/strategic-merge-patch+json';

/** client-go's rest_client_request_duration_seconds buckets. */
const DURATION_BUCKETS = [0.005, 0.025, 0.1, 0.25, 0.5, 1, 2, 4, 8, 15, 30, 60];

export type Verb = 'GET' | 'POST' | 'PUT' | 'PATCH' | 'DELETE';
export type JsonObject = Record<string, unknown>;

export interface ApiRequest {
  readonly method: Verb;
  /** Absolute API path with every segment already escaped, e.g. /api/v1/nodes/n1. */
  readonly path: string;
  /** Low-cardinality metric label, e.g. "nodes/status" or "events". */
  readonly resource: string;
  readonly query?: Readonly<Record<string, string>>;
  readonly body?: unknown;
  /** Defaults to application/json when there is a body. */
  readonly contentType?: string;
  readonly timeoutMs?: number;
}

/** The parts of a Node the agent reads, still as raw JSON. */
export interface NodeSnapshot {
  readonly name: string;
  readonly uid: string;
  readonly conditions: readonly JsonObject[];
  readonly annotations: Readonly<Record<string, string>>;
  readonly taints: readonly JsonObject[];
  /** status.capacity as the kubelet publishes it: quantities by resource (`nvidia.com/gpu`: "8"). */
  readonly capacity?: Readonly<Record<string, string>>;
}

export interface KubeClientOptions {
  readonly connection: ApiConnection;
  /** Agent version for the User-Agent header: node-problem-detector/<version>. */
  readonly version: string;
  readonly registry: Registry;
  readonly clock?: Clock;
  readonly logger?: Logger;
  /** Per-request deadline (connect, headers and body); default 10 s. */
  readonly timeoutMs?: number;
  /** Client-side throttle, NPD's --kube-api-qps and --kube-api-burst; none when absent. */
  readonly qps?: number;
  readonly burst?: number;
}

type Labels = 'verb' | 'resource' | 'code';

function asObject(value: unknown): JsonObject {
  return value !== null && typeof value === 'object' && !Array.isArray(value) ? (value as JsonObject) : {};
}

function objectList(value: unknown): JsonObject[] {
  return Array.isArray(value) ? value.map(asObject) : [];
}

function stringMap(value: unknown): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [k, v] of Object.entries(asObject(value))) if (typeof v === 'string') out[k] = v;
  return out;
}

export function nodeSnapshot(raw: JsonObject): NodeSnapshot {
  const metadata = asObject(raw.metadata);
  return {
    name: typeof metadata.name === 'string' ? metadata.name : '',
    uid: typeof metadata.uid === 'string' ? metadata.uid : '',
    conditions: objectList(asObject(raw.status).conditions),
    annotations: stringMap(metadata.annotations),
    taints: objectList(asObject(raw.spec).taints),
    capacity: stringMap(asObject(raw.status).capacity),
  };
}

const seg = encodeURIComponent;

/**
 * A small JSON client for the handful of calls the agent makes. It replaces client-node's generated
 * API (about 1,100 modules), keeps one keep-alive agent, puts a deadline on every call and measures
 * every call.
 */
export class KubeClient {
  private readonly conn: ApiConnection;
  private readonly agent: http.Agent;
  private readonly clock: Clock;
  private readonly logger: Logger | undefined;
  private readonly timeoutMs: number;
  private readonly userAgent: string;
  private readonly duration: Histogram<Labels>;
  private readonly total: Counter<Labels>;
  private readonly limiter: RateLimiter | undefined;
  private readonly throttled: Counter;
  private readonly credentialFailures: Counter<'reason'>;

  constructor(opts: KubeClientOptions) {
    this.conn = opts.connection;
    this.agent = createAgent(opts.connection);
    this.clock = opts.clock ?? systemClock;
    this.logger = opts.logger;
    this.timeoutMs = opts.timeoutMs ?? DEFAULT_REQUEST_TIMEOUT_MS;
    this.userAgent = `node-problem-detector/${opts.version}`;
    this.duration = histogram(opts.registry, {
      name: 'npd_apiserver_request_duration_seconds',
      help: 'API server request latency by verb, resource and HTTP code ("error" for transport failures).',
      labelNames: ['verb', 'resource', 'code'],
      buckets: DURATION_BUCKETS,
    });
    this.total = counter(opts.registry, {
      name: 'npd_apiserver_requests_total',
      help: 'API server requests by verb, resource and HTTP code ("error" for transport failures).',
      labelNames: ['verb', 'resource', 'code'],
    });
    this.limiter =
      opts.qps === undefined ? undefined : new RateLimiter(opts.qps, opts.burst ?? 0, this.clock);
    this.throttled = counter(opts.registry, {
      name: 'npd_apiserver_throttled_seconds_total',
      help: 'Time requests waited for the client-side rate limit (--kube-api-qps, --kube-api-burst).',
    });
    this.credentialFailures = counter(opts.registry, {
      name: 'npd_apiserver_credential_failures_total',
      help: 'Requests that failed for want of credentials (exec plugin timed out, printed too much, exited non-zero, printed no token).',
      labelNames: ['reason'],
    });
    zeroed(this.credentialFailures, ...CREDENTIAL_FAILURES.map((reason) => ({ reason })));
  }

  async getNode(name: string, opts: { resourceVersion?: string } = {}): Promise<NodeSnapshot> {
    const query = opts.resourceVersion === undefined ? undefined : { resourceVersion: opts.resourceVersion };
    const raw = await this.request({
      method: 'GET',
      path: `/api/v1/nodes/${seg(name)}`,
      resource: 'nodes',
      query,
    });
    return nodeSnapshot(raw);
  }

  /** Strategic merge, never merge-patch: a merge patch would replace kubelet's conditions too. */
  async patchNodeStatus(name: string, body: JsonObject): Promise<NodeSnapshot> {
    const path = `/api/v1/nodes/${seg(name)}/status`;
    const raw = await this.request({
      method: 'PATCH',
      path,
      resource: 'nodes/status',
      body,
      contentType: STRATEGIC_MERGE_PATCH,
    });
    return nodeSnapshot(raw);
  }

  createEvent(namespace: string, event: JsonObject): Promise<JsonObject> {
    const path = `/api/v1/namespaces/${seg(namespace)}/events`;
    return this.request({ method: 'POST', path, resource: 'events', body: event });
  }

  patchEvent(namespace: string, name: string, body: JsonObject): Promise<JsonObject> {
    const path = `/api/v1/namespaces/${seg(namespace)}/events/${seg(name)}`;
    return this.request({
      method: 'PATCH',
      path,
      resource: 'events',
      body,
      contentType: STRATEGIC_MERGE_PATCH,
    });
  }

  /**
   * Sends one request and returns the parsed JSON object. Throws ApiError (a SinkError): with the HTTP
   * status and Status.reason for non-2xx answers (plus retryAfterMs on 429/5xx with Retry-After), and
   * without a status for transport failures, timeouts and unparsable 2xx bodies.
   */
  async request(req: ApiRequest): Promise<JsonObject> {
    await this.throttle(req);
    const started = this.clock.hrtime();
    let code = 'error';
    try {
      const res = await this.transport(req);
      code = String(res.status);
      return this.interpret(req, res);
    } finally {
      const seconds = Number(this.clock.hrtime() - started) / 1e9;
      const labels = { verb: req.method, resource: req.resource, code };
      this.duration.observe(labels, seconds);
      this.total.inc(labels);
    }
  }

  private async throttle(req: ApiRequest): Promise<void> {
    const waited = (await this.limiter?.wait()) ?? 0;
    if (waited === 0) return;
    this.throttled.inc(waited / 1000);
    // client-go logs waits over a second the same way: they mean the QPS flag is too low.
    if (waited >= 1000) {
      this.logger?.info(
        { verb: req.method, path: req.path, waitedMs: waited },
        'waited for client-side throttling',
      );
    }
  }

  /** Frees pooled sockets; in-flight requests still finish. */
  close(): void {
    this.agent.destroy();
  }

  private async transport(req: ApiRequest): Promise<RawResponse> {
    // Concatenate rather than resolve: a server URL may carry a path prefix (e.g. behind a proxy).
    const url = new URL(`${this.conn.server}${req.path}`);
    for (const [k, v] of Object.entries(req.query ?? {})) url.searchParams.set(k, v);
    const body = req.body === undefined ? undefined : Buffer.from(JSON.stringify(req.body), 'utf8');
    try {
      const deadlineMs = req.timeoutMs ?? this.timeoutMs;
      const startedNs = this.clock.hrtime();
      const headers: Record<string, string> = {
        ...(await this.credentials(deadlineMs)),
        accept: 'application/json',
        'user-agent': this.userAgent,
      };
      if (body) {
        headers['content-type'] = req.contentType ?? 'application/json';
        headers['content-length'] = String(body.length);
      }
      // The deadline covers getting credentials too: a slow plugin leaves the request less time.
      const timeoutMs = Math.floor(deadlineMs - Number(this.clock.hrtime() - startedNs) / 1e6);
      if (timeoutMs <= 0) throw new TimeoutError(deadlineMs);
      return await send(this.agent, { method: req.method, url, headers, body, timeoutMs }, this.clock);
    } catch (err) {
      const error = new ApiError(`${req.method} ${req.path}: ${(err as Error).message}`);
      error.cause = err;
      this.logger?.debug({ err, verb: req.method, path: req.path }, 'API request failed');
      throw error;
    }
  }

  /** The request's credentials, or a counted failure once the deadline passes without them. */
  private async credentials(budgetMs: number): Promise<Record<string, string>> {
    let timer: TimerHandle | undefined;
    const deadline = new Promise<never>((_, reject) => {
      timer = this.clock.setTimeout(
        () => reject(new CredentialError('timeout', `credentials: timed out after ${budgetMs}ms`)),
        budgetMs,
      );
    });
    try {
      return await Promise.race([this.conn.authHeaders(budgetMs), deadline]);
    } catch (err) {
      this.credentialFailures.inc({ reason: err instanceof CredentialError ? err.reason : 'error' });
      throw err;
    } finally {
      timer?.cancel();
    }
  }

  private interpret(req: ApiRequest, res: RawResponse): JsonObject {
    const where = `${req.method} ${req.path}`;
    if (res.status < 200 || res.status > 299) {
      const { reason, message } = statusDetails(res.body);
      const retryable = res.status === 429 || res.status >= 500;
      const header = res.headers['retry-after'];
      const retryAfter = retryable ? parseRetryAfter(header, this.clock.now()) : undefined;
      const text = `${where}: ${res.status}${reason ? ` ${reason}` : ''}: ${message ?? res.body.slice(0, 200)}`;
      throw new ApiError(text, res.status, reason, retryAfter);
    }
    if (res.body.trim() === '') return {};
    try {
      const parsed: unknown = JSON.parse(res.body);
      if (parsed !== null && typeof parsed === 'object' && !Array.isArray(parsed))
        return parsed as JsonObject;
    } catch {
      // fall through: client-go retries an unreadable 2xx like a transport failure
    }
    throw new ApiError(`${where}: ${res.status} response is not a JSON object`);
  }
}
