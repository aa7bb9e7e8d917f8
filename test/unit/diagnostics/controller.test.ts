import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { FakeClock } from '../../../src/core/clock.ts';
import { silentLogger } from '../../../src/core/logger.ts';
import { createRegistry } from '../../../src/core/metrics.ts';
import type { BundlePart } from '../../../src/diagnostics/collect.ts';
import { DiagnosticsController } from '../../../src/diagnostics/controller.ts';
import { newUploadKey, sealUploadURL, uploadTarget } from '../../../src/diagnostics/sealed-url.ts';
import type { NodeDiagnosticRequest, NodeDiagnosticStatus } from '../../../src/kube/node-diagnostics.ts';

const NODE = 'n1';

function request(name: string, over: Partial<NodeDiagnosticRequest> = {}): NodeDiagnosticRequest {
  return {
    name,
    uid: `uid-${name}`,
    nodeName: NODE,
    uploadURL: `http://127.0.0.1/${name}?sig=secret`,
    sealedUploadURL: '',
    sinceMinutes: undefined,
    maxBytes: undefined,
    phase: '',
    attempts: undefined,
    completedAt: undefined,
    ...over,
  };
}

/** Plain URLs are allowed unless `allowPlain` is false; sealed ones open with `key`. */
function setup(items: NodeDiagnosticRequest[], now = 0, opts = { allowPlain: true, key: newUploadKey() }) {
  const registry = createRegistry();
  const patches: [string, NodeDiagnosticStatus][] = [];
  const uploads: { url: string; bytes: number }[] = [];
  const sinces: number[] = [];
  const deletes: [string, string][] = [];
  const faults = { patch: 0, upload: undefined as Error | undefined, publish: 0 };
  const published: number[] = [];
  const parts: BundlePart[] = [
    { name: 'a.txt', maxBytes: 1 << 20, read: async () => ({ text: 'a'.repeat(4096) }) },
  ];
  const controller = new DiagnosticsController({
    api: {
      list: async () => ({ items, complete: true }),
      patchStatus: async (name, status) => {
        if (faults.patch > 0 && status.phase !== 'Running') {
          faults.patch--;
          throw new Error('apiserver down');
        }
        patches.push([name, status]);
      },
      delete: async (name, uid) => {
        deletes.push([name, uid]);
      },
      publishKey: async () => {
        if (faults.publish > 0) {
          faults.publish--;
          throw new Error('apiserver down');
        }
        published.push(1);
      },
    },
    target: (req) => uploadTarget(req, opts.key, opts.allowPlain),
    nodeName: NODE,
    clock: new FakeClock(now),
    registry,
    logger: silentLogger(),
    parts: (since) => {
      sinces.push(since);
      return parts;
    },
    upload: async (url, body) => {
      if (faults.upload) throw faults.upload;
      uploads.push({ url, bytes: body.length });
    },
  });
  const metric = async (name: string, labels: Record<string, string> = {}) => {
    const m = (await registry.getSingleMetric(name)?.get())?.values ?? [];
    return m.find((v) => Object.entries(labels).every(([k, l]) => v.labels[k] === l))?.value;
  };
  return { controller, patches, uploads, sinces, faults, metric, deletes, published };
}

describe('DiagnosticsController', () => {
  it('serves a request once: Running, upload, Succeeded with the bytes', async () => {
    const { controller, patches, uploads, metric } = setup([request('r1')]);
    await controller.poll();
    await controller.poll();
    assert.equal(uploads.length, 1, 'a second poll does not redo it');
    assert.deepEqual(
      patches.map(([n, s]) => [n, s.phase]),
      [
        ['r1', 'Running'],
        ['r1', 'Succeeded'],
      ],
    );
    const done = patches[1]?.[1];
    assert.equal(done?.bytes, uploads[0]?.bytes);
    assert.match(done?.message ?? '', /^uploaded \d+ bytes/);
    assert.equal(JSON.stringify(patches).includes('secret'), false, 'the URL never enters a status');
    assert.equal(await metric('npd_diagnostics_requests_total', { result: 'succeeded' }), 1);
    assert.equal(await metric('npd_diagnostics_uploaded_bytes_total'), uploads[0]?.bytes);
  });

  it('ignores a request for another node even when the API server returns it', async () => {
    const { controller, patches, uploads, metric } = setup([request('r2', { nodeName: 'other' })]);
    await controller.poll();
    await controller.poll();
    assert.deepEqual(patches, []);
    assert.deepEqual(uploads, []);
    assert.equal(await metric('npd_diagnostics_ignored_total', { reason: 'other_node' }), 1, 'counted once');
  });

  it('never redoes a terminal request (a restarted agent finds the phase on the object)', async () => {
    const { controller, patches, uploads } = setup([
      request('done', { phase: 'Succeeded' }),
      request('failed', { phase: 'Failed' }),
      request('interrupted', { phase: 'Running' }),
    ]);
    await controller.poll();
    assert.deepEqual(
      uploads.map((u) => u.url.split('?')[0]),
      ['http://127.0.0.1/interrupted'],
    );
    assert.deepEqual([...new Set(patches.map(([n]) => n))], ['interrupted']);
  });

  it('a request an agent died on is retried once, then Failed without collecting (no crash loop)', async () => {
    const first = setup([request('fresh')]);
    await first.controller.poll();
    assert.equal(first.patches[0]?.[1].attempts, 1, 'the first Running carries attempts 1');

    const retried = setup([request('died-once', { phase: 'Running', attempts: 1 })]);
    await retried.controller.poll();
    assert.equal(retried.uploads.length, 1, 'collected again, once');
    assert.equal(retried.patches[0]?.[1].attempts, 2);

    const legacy = setup([request('no-count', { phase: 'Running' })]);
    await legacy.controller.poll();
    assert.equal(legacy.patches[0]?.[1].attempts, 2, 'Running without a count was attempted once');

    const dead = setup([request('died-twice', { phase: 'Running', attempts: 2 })]);
    await dead.controller.poll();
    await dead.controller.poll();
    assert.deepEqual(dead.uploads, [], 'not collected a third time');
    assert.deepEqual(
      dead.patches.map(([n, st]) => [n, st.phase]),
      [['died-twice', 'Failed']],
    );
    assert.match(dead.patches[0]?.[1].message ?? '', /agent stopped while collecting this request 2 times/);
    assert.equal(await dead.metric('npd_diagnostics_failures_total', { stage: 'interrupted' }), 1);
    assert.equal(await dead.metric('npd_diagnostics_requests_total', { result: 'failed' }), 1);
  });

  it('deletes its own finished requests once their TTL has passed, and counts them', async () => {
    const now = Date.UTC(2026, 5, 1);
    const hour = 3_600_000;
    const { controller, deletes, metric } = setup(
      [
        request('old-done', { phase: 'Succeeded', completedAt: now - 25 * hour }),
        request('old-failed', { phase: 'Failed', completedAt: now - 48 * hour }),
        request('recent', { phase: 'Succeeded', completedAt: now - hour }),
        request('other-node', { phase: 'Succeeded', completedAt: now - 48 * hour, nodeName: 'other' }),
        request('running', { phase: 'Running', attempts: 1 }),
      ],
      now,
    );
    await controller.poll();
    assert.deepEqual(deletes, [
      ['old-done', 'uid-old-done'],
      ['old-failed', 'uid-old-failed'],
    ]);
    assert.equal(await metric('npd_diagnostics_expired_total'), 2);
  });

  it('an upload failure gives Failed with its message and counts it', async () => {
    const { controller, patches, faults, metric } = setup([request('r3')]);
    faults.upload = new Error('upload target answered 500');
    await controller.poll();
    const last = patches.at(-1)?.[1];
    assert.equal(last?.phase, 'Failed');
    assert.equal(last?.message, 'upload target answered 500');
    assert.equal(last?.bytes, undefined);
    assert.equal(await metric('npd_diagnostics_failures_total', { stage: 'upload' }), 1);
    assert.equal(await metric('npd_diagnostics_requests_total', { result: 'failed' }), 1);
  });

  it('a result that could not be written is retried without collecting again', async () => {
    const { controller, patches, uploads, faults, metric } = setup([request('r4')]);
    faults.patch = 1;
    await controller.poll();
    assert.deepEqual(
      patches.map(([, s]) => s.phase),
      ['Running'],
    );
    await controller.poll();
    assert.deepEqual(
      patches.map(([, s]) => s.phase),
      ['Running', 'Succeeded'],
    );
    assert.equal(uploads.length, 1);
    assert.equal(await metric('npd_diagnostics_failures_total', { stage: 'status' }), 1);
  });

  it('clamps sinceMinutes and maxBytes to their bounds', async () => {
    const { controller, patches, sinces } = setup([
      request('tiny', { maxBytes: 10, sinceMinutes: 0 }),
      request('huge', { uid: 'u-huge', sinceMinutes: 10_000 }),
    ]);
    await controller.poll();
    assert.deepEqual(sinces, [1, 1440]);
    const tiny = patches.find(([n, s]) => n === 'tiny' && s.phase === 'Succeeded')?.[1];
    assert.match(
      tiny?.message ?? '',
      /truncated: a\.txt/,
      'maxBytes 10 is raised to the 1024 floor, still < 4096',
    );
  });

  it('opens a sealed URL with its key and uploads there; the URL never enters a status', async () => {
    const key = newUploadKey();
    const url = 'https://bucket.example/n1.tar.gz?X-Amz-Signature=sealedsecret';
    const sealed = request('sealed', {
      uploadURL: '',
      sealedUploadURL: sealUploadURL(url, key.annotation, NODE),
    });
    const { controller, patches, uploads } = setup([sealed], 0, { allowPlain: false, key });
    await controller.poll();
    assert.deepEqual(
      uploads.map((u) => u.url),
      [url],
    );
    assert.equal(patches.at(-1)?.[1].phase, 'Succeeded');
    assert.equal(JSON.stringify(patches).includes('sealedsecret'), false);
  });

  it('refuses a plain uploadURL by default: Failed at once, nothing collected or sent, counted', async () => {
    const { controller, patches, uploads, sinces, metric } = setup([request('plain')], 0, {
      allowPlain: false,
      key: newUploadKey(),
    });
    await controller.poll();
    await controller.poll();
    assert.deepEqual(uploads, []);
    assert.deepEqual(sinces, [], 'no bundle was collected');
    assert.deepEqual(
      patches.map(([n, s]) => [n, s.phase]),
      [['plain', 'Failed']],
    );
    const status = patches[0]?.[1];
    assert.match(status?.message ?? '', /^uploadURL refused: a plain uploadURL is readable by every node/);
    assert.equal(status?.conditions?.[0]?.reason, 'UploadRefused');
    assert.equal(JSON.stringify(patches).includes('secret'), false);
    assert.equal(await metric('npd_diagnostics_failures_total', { stage: 'target' }), 1);
    assert.equal(await metric('npd_diagnostics_requests_total', { result: 'failed' }), 1);
  });

  it('a URL sealed to another key or node fails with why, and nothing is sent', async () => {
    const key = newUploadKey();
    const url = 'https://bucket.example/x';
    const { controller, patches, uploads } = setup(
      [
        request('old-key', { sealedUploadURL: sealUploadURL(url, newUploadKey().annotation, NODE) }),
        request('other-node', { sealedUploadURL: sealUploadURL(url, key.annotation, 'n2') }),
      ],
      0,
      { allowPlain: true, key },
    );
    await controller.poll();
    assert.deepEqual(uploads, [], 'a sealed URL that does not open is never replaced by the plain one');
    const messages = patches.map(([n, s]) => `${n}: ${s.message}`);
    assert.match(
      messages[0] ?? '',
      new RegExp(
        `^old-key: sealedUploadURL was sealed to key \\w+, but this node's agent has key ${key.kid}`,
      ),
    );
    assert.match(
      messages[1] ?? '',
      /^other-node: sealedUploadURL could not be opened: it was sealed for another node/,
    );
  });

  it('publishes its key before listing, retries a failed publish at the next poll and counts it', async () => {
    const { controller, uploads, faults, published, metric } = setup([request('r5')]);
    faults.publish = 1;
    await controller.poll();
    assert.equal(published.length, 0);
    assert.equal(uploads.length, 1, 'requests are still served while the key is not on the Node');
    assert.equal(await metric('npd_diagnostics_failures_total', { stage: 'key' }), 1);
    await controller.poll();
    await controller.poll();
    assert.equal(published.length, 1, 'published once, then not again');
  });
});
