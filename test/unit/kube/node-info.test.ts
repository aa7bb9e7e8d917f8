import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { KubeNodeStatusWriter } from '../../../src/conditions/node-status-writer.ts';
import { FakeClock } from '../../../src/core/clock.ts';
import { createRegistry } from '../../../src/core/metrics.ts';
import { KubeClient, type NodeSnapshot } from '../../../src/kube/client.ts';
import { ApiError } from '../../../src/kube/errors.ts';
import { NodeInfo } from '../../../src/kube/node-info.ts';
import { json, plainConnection, startFakeApiServer } from '../../support/fake-apiserver.ts';

function snapshot(uid: string): NodeSnapshot {
  return { name: 'node-1', uid, conditions: [], annotations: {}, taints: [] };
}

/** getNode answers from a script: an Error is thrown, a string is returned as the UID. */
function scriptedClient(script: (Error | string)[]) {
  const calls: { at: number; name: string; resourceVersion: string | undefined }[] = [];
  let clock: FakeClock | undefined;
  return {
    calls,
    bind(c: FakeClock) {
      clock = c;
    },
    async getNode(name: string, opts: { resourceVersion?: string } = {}): Promise<NodeSnapshot> {
      calls.push({ at: clock?.now() ?? 0, name, resourceVersion: opts.resourceVersion });
      const next = script.shift() ?? new Error('script exhausted');
      if (next instanceof Error) throw next;
      return snapshot(next);
    },
  };
}

async function flush(): Promise<void> {
  for (let i = 0; i < 5; i++) await new Promise((resolve) => setImmediate(resolve));
}

describe('NodeInfo', () => {
  it('fetches in the background with backoff until the UID is known', async () => {
    const clock = new FakeClock(0);
    const client = scriptedClient([
      new ApiError('refused'),
      new ApiError('nodes "node-1" not found', 404),
      'uid-9',
    ]);
    client.bind(clock);
    const registry = createRegistry();
    const info = new NodeInfo({ client, nodeName: 'node-1', clock, registry, random: () => 0 });
    info.start();
    assert.equal(info.uid(), undefined);
    await flush();
    assert.equal(info.uid(), undefined);
    clock.advance(999);
    await flush();
    assert.equal(client.calls.length, 1);
    clock.advance(1);
    await flush();
    clock.advance(2000);
    await flush();
    assert.deepEqual(
      client.calls.map((c) => [c.at, c.name, c.resourceVersion]),
      [
        [0, 'node-1', '0'],
        [1000, 'node-1', '0'],
        [3000, 'node-1', '0'],
      ],
    );
    assert.equal(info.uid(), 'uid-9');
    assert.equal(await info.ready, 'uid-9');
    assert.equal(info.node()?.uid, 'uid-9');
    assert.equal(clock.pendingTimers(), 0);
    const text = await registry.getSingleMetricAsString('npd_node_info_fetch_total');
    assert.match(text, /result="failure"\} 2/);
    assert.match(text, /result="success"\} 1/);
  });

  it('caps the backoff and honours Retry-After', async () => {
    const clock = new FakeClock(0);
    const failures = Array.from({ length: 8 }, () => new ApiError('refused'));
    const client = scriptedClient([
      ...failures,
      new ApiError('slow down', 429, 'TooManyRequests', 45_000),
      'u',
    ]);
    client.bind(clock);
    const info = new NodeInfo({ client, nodeName: 'n', clock, registry: createRegistry(), random: () => 0 });
    info.start();
    await flush();
    for (let i = 0; i < 400; i++) {
      clock.advance(1000);
      await flush();
    }
    const gaps = client.calls.slice(1).map((c, i) => c.at - (client.calls[i]?.at ?? 0));
    assert.deepEqual(gaps, [1000, 2000, 4000, 8000, 16000, 30000, 30000, 30000, 45000]);
    assert.equal(info.uid(), 'u');
  });

  it('takes the first UID observed elsewhere and stops fetching', async () => {
    const clock = new FakeClock(0);
    const client = scriptedClient([new ApiError('refused'), 'from-get']);
    client.bind(clock);
    const info = new NodeInfo({ client, nodeName: 'n', clock, registry: createRegistry() });
    info.start();
    await flush();
    info.observe('from-patch');
    info.observe('later');
    assert.equal(await info.ready, 'from-patch');
    clock.advance(60_000);
    await flush();
    assert.equal(client.calls.length, 1);
    assert.equal(info.uid(), 'from-patch');
  });

  it("keeps the Node's capacity from the GET and from every status patch's response", async () => {
    const clock = new FakeClock(0);
    const withGpus = (uid: string, gpus: string): NodeSnapshot => ({
      ...snapshot(uid),
      capacity: { cpu: '96', 'nvidia.com/gpu': gpus },
    });
    const answers = [withGpus('uid-1', '8'), withGpus('uid-1', '7'), withGpus('uid-other', '1')];
    const client = {
      getNode: async () => answers[0] as NodeSnapshot,
      patchNodeStatus: async () => answers.shift() as NodeSnapshot,
    };
    const info = new NodeInfo({ client, nodeName: 'node-1', clock, registry: createRegistry() });
    assert.equal(info.capacity('nvidia.com/gpu'), undefined, 'no Node seen yet');
    info.start();
    await info.ready;
    assert.equal(info.capacity('nvidia.com/gpu'), '8');
    assert.equal(info.capacity('example.com/none'), undefined);
    const patching = info.observing(client);
    await patching.patchNodeStatus('node-1', {});
    assert.equal(info.capacity('nvidia.com/gpu'), '8', 'the same answer as the GET');
    await patching.patchNodeStatus('node-1', {});
    assert.equal(info.capacity('nvidia.com/gpu'), '7', 'the device plugin re-registered fewer');
    await patching.patchNodeStatus('node-1', {});
    assert.equal(info.capacity('nvidia.com/gpu'), '7', "another Node's answer is not this Node");
  });
});

describe('KubeNodeStatusWriter', () => {
  it('sends NPD status patch body and reports the UID from the response', async () => {
    const srv = await startFakeApiServer((_req, res) =>
      json(res, 200, { kind: 'Node', metadata: { name: 'node-1', uid: 'uid-from-patch' } }),
    );
    const client = new KubeClient({
      connection: plainConnection(srv.url),
      version: 't',
      registry: createRegistry(),
    });
    const uids: string[] = [];
    const writer = new KubeNodeStatusWriter(client, 'node-1', (uid) => uids.push(uid));
    const condition = {
      type: 'KernelDeadlock',
      status: 'False' as const,
      lastHeartbeatTime: '2026-01-01T12:00:01Z',
      lastTransitionTime: '2026-01-01T11:00:00Z',
      reason: 'KernelHasNoDeadlock',
      message: 'kernel has no deadlock',
    };
    await writer.patchConditions([condition]);
    const [req] = srv.requests;
    assert.equal(req?.method, 'PATCH');
    assert.equal(req?.url, '/api/v1/nodes/node-1/status');
    assert.equal(req?.headers['content-type'], 'application/strategic-merge-patch+json');
    assert.equal(
      req?.body,
      '{"status":{"conditions":[{"type":"KernelDeadlock","status":"False","lastHeartbeatTime":"2026-01-01T12:00:01Z",' +
        '"lastTransitionTime":"2026-01-01T11:00:00Z","reason":"KernelHasNoDeadlock","message":"kernel has no deadlock"}]}}',
    );
    assert.deepEqual(uids, ['uid-from-patch']);
    client.close();
    await srv.close();
  });
});
