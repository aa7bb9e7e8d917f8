import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Registry } from 'prom-client';
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

/** NPD's two listeners: status on --port (20256) and metrics on --prometheus-port (20257). */
export class HttpServers {
  private readonly servers: Server[] = [];

  async listen(
    endpoints: Endpoints,
    status: { address: string; port: number },
    metrics: { address: string; port: number },
  ): Promise<void> {
    const statusRoutes = routesForStatus(endpoints);
    const metricRoutes = { '/metrics': metricsRoute(endpoints.registry) };
    const shared = status.port > 0 && status.port === metrics.port && status.address === metrics.address;
    if (shared) {
      await this.start({ ...statusRoutes, ...metricRoutes }, status.address, status.port);
      return;
    }
    if (status.port > 0) await this.start(statusRoutes, status.address, status.port);
    if (metrics.port > 0) await this.start(metricRoutes, metrics.address, metrics.port);
  }

  /** The bound ports, in listen order. */
  ports(): number[] {
    return this.servers.map((s) => (s.address() as AddressInfo).port);
  }

  async close(): Promise<void> {
    await Promise.all(this.servers.map((s) => new Promise<void>((r) => s.close(() => r()))));
    this.servers.length = 0;
  }

  private start(routes: Record<string, Route>, address: string, port: number): Promise<void> {
    const server = createServer((req, res) => void handle(routes, req, res));
    server.keepAliveTimeout = 5000;
    this.servers.push(server);
    return new Promise((resolve, reject) => {
      server.once('error', (err) => {
        this.servers.splice(this.servers.indexOf(server), 1);
        reject(err);
      });
      server.listen(port, address, () => {
        server.off('error', reject);
        resolve();
      });
    });
  }
}

function routesForStatus(e: Endpoints): Record<string, Route> {
  return {
    '/healthz': (res) => probe(res, e.health()),
    '/readyz': (res) => probe(res, e.ready()),
    '/conditions': (res) => {
      const body = e.conditions().map((c) => ({ ...c, transition: new Date(c.transition).toISOString() }));
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
