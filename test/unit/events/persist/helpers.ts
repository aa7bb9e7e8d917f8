import http from 'node:http';
import type { AddressInfo } from 'node:net';

export { captureLogger, drain, kubeEvent, metricValue } from '../record/helpers.ts';

export interface Received {
  readonly method: string;
  readonly url: string;
  readonly headers: http.IncomingHttpHeaders;
  readonly body: string;
}

/** Answers a request now (status and headers), or returns undefined to hold it until release(). */
export type Reply = (
  req: Received,
  index: number,
) => { status: number; headers?: Record<string, string> } | undefined;

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
      };
      requests.push(r);
      const answer = reply(r, requests.length - 1);
      if (!answer) held.push(res);
      else res.writeHead(answer.status, answer.headers ?? {}).end('{}');
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
