/**
 * A backlog over one listing (issue 38 item 7): above 50 pages (5,000 requests) listing failed, and the
 * agent then neither served nor expired anything, so the backlog never shrank. Now the first 5,000 are
 * served and expired, the overflow is counted and /healthz says why. The real paged listing runs against
 * a fake API server that pages by `limit` and `continue` and deletes what the agent deletes.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { liveness } from '../../../src/agent/readiness.ts';
import { FakeClock } from '../../../src/core/clock.ts';
import { silentLogger } from '../../../src/core/logger.ts';
import { createRegistry } from '../../../src/core/metrics.ts';
import { DiagnosticsController } from '../../../src/diagnostics/controller.ts';
import type { JsonObject } from '../../../src/kube/client.ts';
import {
  listNodeDiagnostics,
  MAX_LISTED,
  type NodeDiagnosticsClient,
} from '../../../src/kube/node-diagnostics.ts';

const NODE = 'n1';
const DAY = 24 * 60 * 60_000;
const NOW = Date.UTC(2026, 11, 4);

/** `finished` requests: the first `expired` of them completed two days ago, the rest just now. */
function backlog(finished: number, expired: number): JsonObject[] {
  const at = (i: number) => new Date(i < expired ? NOW - 2 * DAY : NOW).toISOString();
  const done = Array.from({ length: finished }, (_, i) => ({
    metadata: { name: `done-${String(i).padStart(5, '0')}`, uid: `u${i}` },
    spec: { nodeName: NODE, uploadURL: 'http://127.0.0.1/x' },
    status: { phase: 'Succeeded', completedAt: at(i) },
  }));
  // Listed first (name order), like a request created when the backlog was already there.
  const fresh = {
    metadata: { name: 'a-new', uid: 'u-new' },
    spec: { nodeName: NODE, uploadURL: 'http://127.0.0.1/new' },
  };
  return [fresh, ...done];
}

/** An API server holding `objects`, listed in pages and deleted by uid. */
function apiServer(objects: JsonObject[]): NodeDiagnosticsClient {
  return {
    request: async (req) => {
      if (req.method === 'DELETE') {
        const uid = (req.body as { preconditions: { uid: string } }).preconditions.uid;
        objects.splice(
          objects.findIndex((o) => (o.metadata as { uid: string }).uid === uid),
          1,
        );
        return {};
      }
      const limit = Number(req.query?.limit);
      const start = Number(req.query?.continue ?? 0);
      const end = Math.min(objects.length, start + limit);
      return {
        items: objects.slice(start, end),
        metadata: end < objects.length ? { continue: String(end) } : {},
      };
    },
  };
}

function setup(objects: JsonObject[]) {
  const registry = createRegistry();
  const uploads: string[] = [];
  const client = apiServer(objects);
  const controller = new DiagnosticsController({
    api: {
      list: () => listNodeDiagnostics(client, NODE),
      patchStatus: async () => undefined,
      delete: (name, uid) =>
        client
          .request({ method: 'DELETE', path: name, resource: 'x', body: { preconditions: { uid } } })
          .then(() => undefined),
      publishKey: async () => undefined,
    },
    target: (req) => req.uploadURL,
    nodeName: NODE,
    clock: new FakeClock(NOW),
    registry,
    logger: silentLogger(),
    parts: () => [{ name: 'a.txt', maxBytes: 1024, read: async () => ({ text: 'a\n' }) }],
    upload: async (url) => void uploads.push(url),
  });
  const metric = async (name: string, labels: Record<string, string> = {}) =>
    (await registry.getSingleMetric(name)?.get())?.values.find((v) =>
      Object.entries(labels).every(([k, l]) => v.labels[k] === l),
    )?.value;
  return { controller, uploads, metric };
}

const monitorsOk = { ok: true, detail: 'kernel-monitor: healthy\n' };
const healthOf = (c: DiagnosticsController) =>
  liveness(monitorsOk, { diagnostics: { health: () => c.health() } } as Parameters<typeof liveness>[1]);

describe('a NodeDiagnostic backlog over one listing', () => {
  it('serves and expires what it listed, counts the overflow and says so in /healthz, then recovers', async () => {
    const objects = backlog(MAX_LISTED + 50, 100);
    const { controller, uploads, metric } = setup(objects);
    await controller.poll();
    assert.deepEqual(uploads, ['http://127.0.0.1/new'], 'the new request is served');
    assert.equal(await metric('npd_diagnostics_expired_total'), 100, 'the expired ones are deleted');
    assert.equal(await metric('npd_diagnostics_list_overflow_total'), 1);
    assert.equal(await metric('npd_diagnostics_failures_total', { stage: 'list' }), 0);
    const health = healthOf(controller);
    assert.equal(health.ok, true, 'degraded, not dead: a restart would not shrink the backlog');
    assert.match(
      health.detail,
      /^kernel-monitor: healthy\ndiagnostics: degraded \(more than 5000 NodeDiagnostic/,
    );
    // 5,051 - 100 requests now fit in one listing: the overflow ends, and /healthz says nothing more.
    await controller.poll();
    assert.equal(await metric('npd_diagnostics_list_overflow_total'), 1);
    assert.deepEqual(healthOf(controller), monitorsOk);
    assert.deepEqual(uploads, ['http://127.0.0.1/new'], 'served once');
  });

  it('control: a backlog that fits in one listing is no overflow', async () => {
    const { controller, uploads, metric } = setup(backlog(MAX_LISTED - 1, 10));
    await controller.poll();
    assert.deepEqual(uploads, ['http://127.0.0.1/new']);
    assert.equal(await metric('npd_diagnostics_expired_total'), 10);
    assert.equal(await metric('npd_diagnostics_list_overflow_total'), 0);
    assert.deepEqual(healthOf(controller), monitorsOk);
  });
});
