import assert from 'node:assert/strict';
import { mkdir } from 'node:fs/promises';
import { join } from 'node:path';
import { after, describe, it } from 'node:test';
import * as grpc from '@grpc/grpc-js';
import { FakeClock } from '../../../../src/core/clock.ts';
import { decodeFields } from '../../../../src/host/protocols/protobuf.ts';
import {
  decodeStatusResponse,
  encodeStatusResponse,
  encodeVersionResponse,
  type RuntimeCondition,
} from '../../../../src/host/protocols/grpc/cri-proto.ts';
import { hostPaths } from '../../../../src/host/paths.ts';
import { env, probe, runOne, T0, tempDir } from './helpers.ts';

type Unary = grpc.handleUnaryCall<Buffer, Buffer>;

const bytes = (b: Buffer) => b;
const method = (name: string) => ({
  path: `/runtime.v1.RuntimeService/${name}`,
  requestStream: false,
  responseStream: false,
  requestSerialize: bytes,
  requestDeserialize: bytes,
  responseSerialize: bytes,
  responseDeserialize: bytes,
});

/** A CRI RuntimeService on a unix socket, served by grpc-js (the real gRPC stack, not ours). */
async function fakeCri(socket: string, handlers: { Version: Unary; Status: Unary }): Promise<grpc.Server> {
  const server = new grpc.Server();
  server.addService({ Version: method('Version'), Status: method('Status') }, handlers);
  await new Promise<void>((resolve, reject) =>
    server.bindAsync(`unix://${socket}`, grpc.ServerCredentials.createInsecure(), (err) =>
      err ? reject(err) : resolve(),
    ),
  );
  return server;
}

const ready = (network: boolean): RuntimeCondition[] => [
  { type: 'RuntimeReady', status: true, reason: '', message: '' },
  {
    type: 'NetworkReady',
    status: network,
    reason: network ? '' : 'NetworkPluginNotReady',
    message: network ? '' : 'cni plugin not initialized',
  },
];

describe('CRI protobuf subset', () => {
  it('decodes what it encodes, including empty repeated elements, and skips unknown fields', () => {
    const conditions = [...ready(false), { type: '', status: false, reason: '', message: '' }];
    const withInfo = Buffer.concat([
      encodeStatusResponse(conditions),
      Buffer.from([0x12, 0x02, 0x0a, 0x00, 0x18, 0x96, 0x01]),
    ]);
    assert.deepEqual(decodeStatusResponse(withInfo), conditions);
    // Field 1 of RuntimeCondition "RuntimeReady", field 2 true: wire bytes written by hand.
    const byHand = Buffer.from(`0a120a100a0c${Buffer.from('RuntimeReady').toString('hex')}1001`, 'hex');
    assert.deepEqual(decodeStatusResponse(byHand), [
      { type: 'RuntimeReady', status: true, reason: '', message: '' },
    ]);
  });
});

describe('containerd probe against a fake CRI server', async () => {
  const root = await tempDir();
  await mkdir(join(root, 'run/containerd'), { recursive: true });
  let network = true;
  let statusError: grpc.ServiceError | undefined;
  let hang = false;
  const versionRequests: Buffer[] = [];
  const server = await fakeCri(join(root, 'run/containerd/containerd.sock'), {
    Version: (call, cb) => {
      versionRequests.push(call.request);
      if (hang) return;
      cb(
        null,
        encodeVersionResponse({
          version: '0.1.0',
          runtimeName: 'containerd',
          runtimeVersion: 'v2.1.4',
          runtimeApiVersion: 'v1',
        }),
      );
    },
    Status: (_call, cb) => (statusError ? cb(statusError) : cb(null, encodeStatusResponse(ready(network)))),
  });
  after(() => server.forceShutdown());
  const clock = new FakeClock(T0);
  const e = env(hostPaths(root), clock);

  it('is OK when RuntimeReady and NetworkReady are true, and sends a v1 VersionRequest', async () => {
    const r = await runOne(probe({ kind: 'containerd' }, e));
    assert.equal(r.status, 'OK');
    assert.equal(r.message, 'containerd v2.1.4: RuntimeReady, NetworkReady');
    assert.equal(r.rule.condition, 'ContainerRuntimeUnhealthy');
    const request = decodeFields(versionRequests.at(-1) ?? Buffer.alloc(0));
    assert.equal(String(request.get(1)?.[0]), 'v1');
  });

  it('is NonOK when NetworkReady is false, unless the config does not require it', async () => {
    network = false;
    try {
      const r = await runOne(probe({ kind: 'containerd' }, e));
      assert.equal(r.status, 'NonOK');
      assert.equal(r.rule.reason, 'ContainerdUnhealthy');
      assert.equal(
        r.message,
        'containerd v2.1.4: NetworkReady=false NetworkPluginNotReady: cni plugin not initialized',
      );
      assert.equal((await runOne(probe({ kind: 'containerd', requireNetworkReady: false }, e))).status, 'OK');
    } finally {
      network = true;
    }
  });

  it('turns a gRPC error status into NonOK with its code and message', async () => {
    statusError = Object.assign(new Error('nope'), {
      code: grpc.status.UNIMPLEMENTED,
      details: 'unknown service runtime.v1.RuntimeService',
      metadata: new grpc.Metadata(),
    });
    try {
      const r = await runOne(probe({ kind: 'containerd' }, e));
      assert.equal(r.status, 'NonOK');
      assert.match(r.message, /gRPC status 12 UNIMPLEMENTED: unknown service runtime.v1.RuntimeService/);
    } finally {
      statusError = undefined;
    }
  });

  it('reports a missing socket as NonOK', async () => {
    const r = await runOne(probe({ kind: 'containerd', socket: '/run/containerd/gone.sock' }, e));
    assert.equal(r.status, 'NonOK');
    assert.match(r.message, /^\/run\/containerd\/gone.sock: .*ENOENT/);
  });

  it('reports a hung runtime as NonOK when its request timeout passes on the clock', async () => {
    hang = true;
    try {
      const seen = versionRequests.length;
      const pending = runOne(probe({ kind: 'containerd', requestTimeout: '2s' }, e));
      while (versionRequests.length === seen) await new Promise((r) => setTimeout(r, 5));
      clock.advance(2000);
      const r = await pending;
      assert.equal(r.status, 'NonOK');
      assert.equal(r.message, '/run/containerd/containerd.sock did not answer within 2s');
    } finally {
      hang = false;
    }
  });
});
