import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo, Socket } from 'node:net';
import type { Counter, Registry } from 'prom-client';
import { counter } from '../core/metrics.ts';
import { isProblem, problemWhen } from '../core/polarity.ts';
import type { Condition } from '../core/types.ts';

export interface Probe {
  readonly ok: boolean;
  readonly detail: string;
}

export interface Endpoints {
  health(): Probe;
  ready(): Probe;
  conditions(): readonly Condition[];
  readonly registry: Registry;
}

type Route = (res: ServerResponse) => Promise<void> | void;

/**
 * Bounds on what a client can hold. Both listeners may be bound to the pod IP, so anyone on the node's
 * network can connect: each listener keeps at most `maxConnections`, and a request must send its headers
 * within `headersTimeoutMs` and finish within `requestTimeoutMs`.
 */
export interface HttpLimits {
  readonly maxConnections: number;
  readonly headersTimeoutMs: number;
  readonly requestTimeoutMs: number;
  readonly keepAliveTimeoutMs: number;
  /** How often Node checks the two timeouts above; they are enforced to within this. */
  readonly checkIntervalMs: number;
}

export const DEFAULT_HTTP_LIMITS: HttpLimits = {
  maxConnections: 64,
  headersTimeoutMs: 5000,
  requestTimeoutMs: 10_000,
  keepAliveTimeoutMs: 5000,
  checkIntervalMs: 1000,
};

export type Listener = 'status' | 'metrics';

/** A listener that could not bind, with what it tried, so the caller can name the flag to change. */
export class ListenError extends Error {
  readonly listener: Listener;
  readonly address: string;
  readonly port: number;
  readonly code: string | undefined;

  constructor(listener: Listener, address: string, port: number, cause: NodeJS.ErrnoException) {
    super(cause.message);
    this.name = 'ListenError';
    this.listener = listener;
    this.address = address;
    this.port = port;
    this.code = cause.code;
  }
}

/** NPD's two listeners: status on --port (20256) and metrics on --prometheus-port (20257). */
export class HttpServers {
  private readonly servers: Server[] = [];
  private readonly limits: HttpLimits;
  private evicted: Counter<'listener'> | undefined;

  constructor(limits: Partial<HttpLimits> = {}) {
    this.limits = { ...DEFAULT_HTTP_LIMITS, ...limits };
  }

  async listen(
    endpoints: Endpoints,
    status: { address: string; port: number },
    metrics: { address: string; port: number },
  ): Promise<void> {
    this.evicted = counter(endpoints.registry, {
      name: 'npd_http_connections_evicted_total',
      help: 'Connections closed unanswered to make room for a new one: the listener held its maximum.',
      labelNames: ['listener'],
    });
    for (const listener of ['status', 'metrics'] as const) this.evicted.inc({ listener }, 0);
    const statusRoutes = routesForStatus(endpoints);
    const metricRoutes = { '/metrics': metricsRoute(endpoints.registry) };
    const shared = status.port > 0 && status.port === metrics.port && status.address === metrics.address;
    if (shared) {
      await this.start('status', { ...statusRoutes, ...metricRoutes }, status.address, status.port);
      return;
    }
    if (status.port > 0) await this.start('status', statusRoutes, status.address, status.port);
    if (metrics.port > 0) await this.start('metrics', metricRoutes, metrics.address, metrics.port);
  }

  /** The bound ports, in listen order. */
  ports(): number[] {
    return this.servers.map((s) => (s.address() as AddressInfo).port);
  }

  async close(): Promise<void> {
    await Promise.all(this.servers.map((s) => new Promise<void>((r) => s.close(() => r()))));
    this.servers.length = 0;
  }

  private start(
    listener: Listener,
    routes: Record<string, Route>,
    address: string,
    port: number,
  ): Promise<void> {
    const l = this.limits;
    const server = createServer(
      {
        headersTimeout: l.headersTimeoutMs,
        requestTimeout: l.requestTimeoutMs,
        keepAliveTimeout: l.keepAliveTimeoutMs,
        connectionsCheckingInterval: l.checkIntervalMs,
      },
      (req, res) => void handle(routes, req, res),
    );
    this.bound(server, () => this.evicted?.inc({ listener }));
    this.servers.push(server);
    return new Promise((resolve, reject) => {
      server.once('error', (err: NodeJS.ErrnoException) => {
        this.servers.splice(this.servers.indexOf(server), 1);
        reject(new ListenError(listener, address, port, err));
      });
      server.listen(port, address, () => {
        server.off('error', reject);
        resolve();
      });
    });
  }

  /**
   * Keeps at most maxConnections open. A new connection is always accepted, closing the oldest one
   * that is not being answered: someone who fills every slot with half-sent requests cannot lock
   * kubelet's /healthz probe out, because each probe connection arrives newest and is answered at once.
   */
  private bound(server: Server, onEvict: () => void): void {
    const open = new Set<Socket>();
    const busy = new WeakSet<Socket>();
    server.on('connection', (socket: Socket) => {
      if (open.size >= this.limits.maxConnections) {
        const victim = oldestIdle(open, busy);
        (victim ?? socket).destroy();
        if (victim) open.delete(victim);
        onEvict();
        if (!victim) return;
      }
      open.add(socket);
      socket.once('close', () => open.delete(socket));
    });
    server.on('request', (req: IncomingMessage, res: ServerResponse) => {
      busy.add(req.socket);
      res.once('close', () => busy.delete(req.socket));
    });
  }
}

function oldestIdle(open: Set<Socket>, busy: WeakSet<Socket>): Socket | undefined {
  for (const s of open) if (!busy.has(s)) return s;
  return undefined;
}

function routesForStatus(e: Endpoints): Record<string, Route> {
  return {
    '/healthz': (res) => probe(res, e.health()),
    '/readyz': (res) => probe(res, e.ready()),
    '/conditions': (res) => {
      // problem and problemWhen: one polarity for every type, as npd_condition_problem has it. evidence:
      // what raised the problem (core/evidence.ts), null where none did (a default, a value from the Node).
      const body = e.conditions().map((c) => ({
        ...c,
        transition: new Date(c.transition).toISOString(),
        problem: isProblem(c),
        problemWhen: problemWhen(c.type),
        evidence: c.evidence ?? null,
      }));
      send(res, 200, 'application/json', JSON.stringify(body));
    },
  };
}

function metricsRoute(registry: Registry): Route {
  return async (res) => send(res, 200, registry.contentType, await registry.metrics());
}

function probe(res: ServerResponse, p: Probe): void {
  send(res, p.ok ? 200 : 503, 'text/plain; charset=utf-8', p.ok ? `ok\n${p.detail}` : p.detail);
}

async function handle(
  routes: Record<string, Route>,
  req: IncomingMessage,
  res: ServerResponse,
): Promise<void> {
  const path = (req.url ?? '/').split('?')[0] ?? '/';
  const route = routes[path];
  if (req.method !== 'GET' && req.method !== 'HEAD')
    return send(res, 405, 'text/plain', 'method not allowed\n');
  if (!route) return send(res, 404, 'text/plain', 'not found\n');
  try {
    await route(res);
  } catch (err) {
    send(res, 500, 'text/plain', `${(err as Error).message}\n`);
  }
}

function send(res: ServerResponse, code: number, type: string, body: string): void {
  res.writeHead(code, { 'content-type': type, 'content-length': Buffer.byteLength(body) });
  res.end(body);
}
