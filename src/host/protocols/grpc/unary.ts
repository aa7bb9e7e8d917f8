import type * as Http2 from 'node:http2';
import type { ClientHttp2Session } from 'node:http2';
import { connect as netConnect } from 'node:net';
import { builtin } from '../../../core/builtin.ts';

/** A gRPC status other than OK, or a transport failure mapped to one (UNAVAILABLE). */
export class GrpcError extends Error {
  readonly code: number;

  constructor(code: number, message: string) {
    super(`gRPC status ${code}${GRPC_CODE_NAMES[code] ? ` ${GRPC_CODE_NAMES[code]}` : ''}: ${message}`);
    this.name = 'GrpcError';
    this.code = code;
  }
}

const GRPC_CODE_NAMES: Readonly<Record<number, string>> = {
  1: 'CANCELLED',
  2: 'UNKNOWN',
  4: 'DEADLINE_EXCEEDED',
  5: 'NOT_FOUND',
  7: 'PERMISSION_DENIED',
  12: 'UNIMPLEMENTED',
  13: 'INTERNAL',
  14: 'UNAVAILABLE',
};

const MAX_RESPONSE = 4 * 1024 * 1024;

/**
 * One gRPC session over a unix socket (HTTP/2 with prior knowledge, as grpc-go serves it). Only unary
 * calls without compression: that is all a CRI health probe needs, and it avoids a protobuf runtime.
 */
export class GrpcUnixClient {
  private readonly session: ClientHttp2Session;
  private readonly signal: AbortSignal;

  constructor(socketPath: string, signal: AbortSignal) {
    this.signal = signal;
    this.session = h2().connect('http://localhost', { createConnection: () => netConnect(socketPath) });
    // Errors surface through each call's stream; an unhandled session error would crash the agent.
    this.session.on('error', () => undefined);
  }

  call(method: string, request: Buffer): Promise<Buffer> {
    return new Promise((resolve, reject) => {
      const stream = this.session.request(
        {
          [h2().constants.HTTP2_HEADER_METHOD]: 'POST',
          [h2().constants.HTTP2_HEADER_PATH]: method,
          [h2().constants.HTTP2_HEADER_CONTENT_TYPE]: 'application/grpc',
          te: 'trailers',
        },
        { signal: this.signal },
      );
      const chunks: Buffer[] = [];
      let size = 0;
      let headers: Record<string, unknown> = {};
      let trailers: Record<string, unknown> = {};
      stream.on('response', (h) => {
        headers = h;
      });
      stream.on('trailers', (t) => {
        trailers = t;
      });
      stream.on('data', (chunk: Buffer) => {
        size += chunk.length;
        if (size > MAX_RESPONSE) stream.close(h2().constants.NGHTTP2_CANCEL);
        else chunks.push(chunk);
      });
      stream.on('error', (err) => reject(new GrpcError(14, err.message)));
      stream.on('close', () => {
        try {
          resolve(finish(headers, trailers, Buffer.concat(chunks)));
        } catch (err) {
          reject(err);
        }
      });
      stream.end(frame(request));
    });
  }

  close(): void {
    this.session.destroy();
  }
}

/** gRPC length-prefixed message: compressed flag 0, 4-byte big-endian length, payload. */
export function frame(message: Buffer): Buffer {
  const head = Buffer.alloc(5);
  head.writeUInt32BE(message.length, 1);
  return Buffer.concat([head, message]);
}

function finish(headers: Record<string, unknown>, trailers: Record<string, unknown>, body: Buffer): Buffer {
  const httpStatus = Number(headers[h2().constants.HTTP2_HEADER_STATUS] ?? 0);
  // A "trailers-only" error puts grpc-status in the headers.
  const status = trailers['grpc-status'] ?? headers['grpc-status'];
  const message = decodeURIComponent(String(trailers['grpc-message'] ?? headers['grpc-message'] ?? ''));
  if (status === undefined) {
    throw new GrpcError(httpStatus === 200 ? 13 : 14, `no grpc-status (HTTP ${httpStatus || 'none'})`);
  }
  if (Number(status) !== 0) throw new GrpcError(Number(status), message);
  if (body.length < 5) throw new GrpcError(13, 'empty response');
  if (body[0] !== 0) throw new GrpcError(13, 'compressed responses are not supported');
  const length = body.readUInt32BE(1);
  if (body.length < 5 + length) throw new GrpcError(13, 'truncated response');
  return body.subarray(5, 5 + length);
}

function h2(): typeof Http2 {
  return builtin<typeof Http2>('node:http2');
}
