import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { Registry } from 'prom-client';
import { type Clock, FakeClock } from '../../../../src/core/clock.ts';
import type { Logger } from '../../../../src/core/logger.ts';
import { silentLogger } from '../../../../src/core/logger.ts';
import { type PersistSink, persistWatcher } from '../../../../src/events/persist/watcher.ts';
import { Broadcaster } from '../../../../src/events/record/broadcaster.ts';
import type { KubeEvent } from '../../../../src/events/record/types.ts';
import { captureLogger, kubeEvent, metricValue } from '../record/helpers.ts';

export { captureLogger, drain, kubeEvent, metricValue } from '../record/helpers.ts';

export interface Received {
  readonly method: string;
  readonly url: string;
  readonly headers: http.IncomingHttpHeaders;
  readonly body: string;
  readonly raw: Buffer;
}

/** Answers a request now (status and headers), or returns undefined to hold it until release(). */
export type Reply = (
  req: Received,
  index: number,
) => { status: number; headers?: Record<string, string>; body?: string | Buffer } | undefined;

export interface TestServer {
  readonly url: string;
  readonly requests: Received[];
  /** Answers every held request with `status`. */
  release(status: number): void;
  close(): Promise<void>;
}

/** A real HTTP server on 127.0.0.1 that records every request. */
export async function startServer(reply: Reply): Promise<TestServer> {
  const requests: Received[] = [];
  const held: http.ServerResponse[] = [];
  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const r = {
        method: req.method ?? '',
        url: req.url ?? '',
        headers: req.headers,
        body: Buffer.concat(chunks).toString(),
        raw: Buffer.concat(chunks),
      };
      requests.push(r);
      const answer = reply(r, requests.length - 1);
      if (!answer) held.push(res);
      else res.writeHead(answer.status, answer.headers ?? {}).end(answer.body ?? '{}');
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}/hook?token=secret-query`,
    requests,
    release(status) {
      for (const res of held.splice(0)) res.writeHead(status).end();
    },
    close() {
      server.closeAllConnections();
      return new Promise((resolve) => server.close(() => resolve()));
    },
  };
}

/**
 * Waits for real I/O (the local server, temp files) by yielding to the event loop; no clock is involved.
 * Fails after a generous real-time bound so a broken test cannot hang.
 */
export async function until(cond: () => boolean | Promise<boolean>, what = 'condition'): Promise<void> {
  const start = Date.now();
  while (!(await cond())) {
    if (Date.now() - start > 5000) throw new Error(`timed out waiting for ${what}`);
    await new Promise<void>((resolve) => setImmediate(resolve));
  }
}

/** Hangs `sink` off a 'kernel' broadcaster behind a persist watcher, as the agent does. */
export function attachSink(
  sink: PersistSink,
  t: { readonly clock: Clock; readonly registry: Registry },
  queueLength?: number,
) {
  const { clock, registry } = t;
  const broadcaster = new Broadcaster<KubeEvent>({ registry, logger: silentLogger(), source: 'kernel' });
  const logger = silentLogger();
  const watcher = persistWatcher(sink, { clock, registry, logger, ...(queueLength ? { queueLength } : {}) })(
    broadcaster,
    'kernel',
  );
  /** npd_events_dropped_total of this sink at `point` (watcher: queue full; flush: left at shutdown). */
  const dropped = (point: string) =>
    metricValue(registry, 'npd_events_dropped_total', { point, source: 'kernel', watcher: sink.name });
  return { broadcaster, watcher, dropped };
}

/**
 * Offers `offered` events while the receiver holds the first request, then shuts down with a grace
 * period that runs out: how many were dropped at the full queue and how many were left at shutdown.
 */
export async function overflowThenShutdown(
  t: {
    readonly sink: PersistSink;
    readonly clock: FakeClock;
    readonly registry: Registry;
    readonly srv: TestServer;
  },
  queueLength: number,
  offered: number,
): Promise<{ atQueue: number | undefined; atFlush: number | undefined }> {
  const { broadcaster, watcher, dropped } = attachSink(t.sink, t, queueLength);
  for (let i = 0; i < offered; i++) broadcaster.actionOrDrop(kubeEvent({ message: `m${i}` }));
  await until(() => t.srv.requests.length === 1, 'first request');
  const atQueue = await dropped('watcher');
  const flushed = watcher.flush(1000);
  await broadcaster.shutdown();
  t.clock.advance(1000);
  await flushed;
  return { atQueue, atFlush: await dropped('flush') };
}

/** What a sink under test is built from: a local receiver, a fake clock, its own registry and log. */
export interface SinkDeps {
  readonly url: string;
  readonly clock: FakeClock;
  readonly registry: Registry;
  readonly logger: Logger;
  readonly random: () => number;
}

/**
 * Starts a receiver answering with `reply` and builds a sink on it with `make`; `closeAll` stops both.
 * `metric('writes', {result})` reads the sink's npd_event_sink_*_total series.
 */
export async function sinkHarness<S extends PersistSink>(reply: Reply, make: (deps: SinkDeps) => S) {
  const srv = await startServer(reply);
  const clock = new FakeClock();
  const registry = new Registry();
  const { logger, records } = captureLogger();
  const sink = make({ url: srv.url, clock, registry, logger, random: () => 0 });
  const metric = (name: string, labels: Record<string, string> = {}) =>
    metricValue(registry, `npd_event_sink_${name}_total`, { sink: sink.name, ...labels });
  const closeAll = async () => {
    await sink.close();
    await srv.close();
  };
  return { srv, sink, clock, registry, records, metric, closeAll };
}
