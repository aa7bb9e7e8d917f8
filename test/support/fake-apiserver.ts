import http from 'node:http';
import https from 'node:https';
import type { AddressInfo } from 'node:net';
import type { TLSSocket } from 'node:tls';
import type { ApiConnection } from '../../src/kube/connection.ts';
import { caCert, serverCert, serverKey } from './tls-fixtures.ts';

export interface RecordedRequest {
  readonly method: string;
  readonly url: string;
  readonly headers: http.IncomingHttpHeaders;
  readonly body: string;
  /** CN of the client certificate, when the server asked for one. */
  readonly clientCN: string | undefined;
}

export type Handler = (req: RecordedRequest, res: http.ServerResponse) => void;

export interface FakeApiServer {
  readonly url: string;
  readonly requests: RecordedRequest[];
  /** Resolves when the next request has been fully received. */
  nextRequest(): Promise<RecordedRequest>;
  close(): Promise<void>;
}

export interface FakeServerOptions {
  readonly tls?: boolean;
  /** Ask for (but do not require) a client certificate signed by the test CA. */
  readonly requestCert?: boolean;
}

export function json(
  res: http.ServerResponse,
  status: number,
  body: unknown,
  headers: http.OutgoingHttpHeaders = {},
) {
  res.writeHead(status, { 'content-type': 'application/json', ...headers });
  res.end(JSON.stringify(body));
}

export function status(
  res: http.ServerResponse,
  code: number,
  reason: string,
  message: string,
  headers = {},
) {
  json(res, code, { kind: 'Status', apiVersion: 'v1', status: 'Failure', message, reason, code }, headers);
}

function peerCN(req: http.IncomingMessage): string | undefined {
  const socket = req.socket as Partial<TLSSocket>;
  if (typeof socket.getPeerCertificate !== 'function') return undefined;
  const cn = socket.getPeerCertificate().subject?.CN;
  return typeof cn === 'string' ? cn : undefined;
}

function recorder(handler: Handler, requests: RecordedRequest[], waiters: ((r: RecordedRequest) => void)[]) {
  return (req: http.IncomingMessage, res: http.ServerResponse) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const recorded: RecordedRequest = {
        method: req.method ?? '',
        url: req.url ?? '',
        headers: req.headers,
        body: Buffer.concat(chunks).toString('utf8'),
        clientCN: peerCN(req),
      };
      requests.push(recorded);
      for (const w of waiters.splice(0)) w(recorded);
      handler(recorded, res);
    });
  };
}

/** A real HTTP(S) server on 127.0.0.1 standing in for kube-apiserver. */
export async function startFakeApiServer(
  handler: Handler,
  opts: FakeServerOptions = {},
): Promise<FakeApiServer> {
  const requests: RecordedRequest[] = [];
  const waiters: ((r: RecordedRequest) => void)[] = [];
  const listener = recorder(handler, requests, waiters);
  const tls = { cert: serverCert, key: serverKey, ca: caCert, requestCert: opts.requestCert ?? false };
  const server = opts.tls
    ? https.createServer({ ...tls, rejectUnauthorized: false }, listener)
    : http.createServer(listener);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `${opts.tls ? 'https' : 'http'}://127.0.0.1:${port}`,
    requests,
    nextRequest: () => new Promise((resolve) => waiters.push(resolve)),
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

/** A plain connection without TLS material or credentials. */
export function plainConnection(server: string, over: Partial<ApiConnection> = {}): ApiConnection {
  const tls = {
    ca: undefined,
    cert: undefined,
    key: undefined,
    insecureSkipTLSVerify: false,
    serverName: undefined,
  };
  return { server, source: 'kubeconfig', tls, authHeaders: async () => ({}), ...over };
}
