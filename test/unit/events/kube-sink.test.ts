import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { createRegistry } from '../../../src/core/metrics.ts';
import { eventJson, eventPatchJson, KubeEventSink } from '../../../src/events/record/kube-sink.ts';
import type { KubeEvent } from '../../../src/events/record/types.ts';
import type { EventsV1Event } from '../../../src/events/series/events.ts';
import { KubeEventsV1Sink } from '../../../src/events/series/kube-sink.ts';
import { eventsV1Json, TypedEventsV1Sink } from '../../../src/events/series/kube-typed.ts';
import { KubeClient } from '../../../src/kube/client.ts';
import {
  type Handler,
  json,
  plainConnection,
  type RecordedRequest,
  startFakeApiServer,
} from '../../support/fake-apiserver.ts';

const FIRST = Date.UTC(2026, 7, 1, 12, 0, 0, 987);

function event(over: Partial<KubeEvent> = {}): KubeEvent {
  return {
    name: 'node-1.17979cfe3d85cd15',
    namespace: 'default',
    involvedObject: { apiVersion: 'v1', kind: 'Node', name: 'node-1', namespace: '', uid: 'uid-1' },
    reason: 'OOMKilling',
    message: 'usage over 90%: Killed process 1234 (foo) %s %d',
    type: 'Warning',
    source: { component: 'kernel-monitor', host: 'node-1' },
    reportingComponent: 'kernel-monitor',
    reportingInstance: 'node-1',
    firstTimestamp: FIRST,
    lastTimestamp: FIRST,
    count: 1,
    ...over,
  };
}

async function withServer(handler: Handler, run: (c: KubeClient, reqs: RecordedRequest[]) => Promise<void>) {
  const srv = await startFakeApiServer(handler);
  const client = new KubeClient({
    connection: plainConnection(srv.url),
    version: 'test',
    registry: createRegistry(),
  });
  try {
    await run(client, srv.requests);
  } finally {
    client.close();
    await srv.close();
  }
}

/** Echoes the body back the way the apiserver does: with a resourceVersion and the stored fields. */
const echo: Handler = (req, res) => {
  const body = JSON.parse(req.body) as Record<string, unknown>;
  const stored = {
    ...body,
    metadata: { ...(body.metadata as object), resourceVersion: '4711', uid: 'ev-uid' },
  };
  json(res, 201, stored);
};

describe('KubeEventSink', () => {
  it('posts the client-go event body with second-precision UTC timestamps and the message verbatim', async () => {
    await withServer(echo, async (client, reqs) => {
      const created = await new KubeEventSink(client).create(event());
      assert.equal(reqs[0]?.method, 'POST');
      assert.equal(reqs[0]?.url, '/api/v1/namespaces/default/events');
      assert.equal(reqs[0]?.headers['content-type'], 'application/json');
      assert.deepEqual(JSON.parse(reqs[0]?.body ?? ''), {
        apiVersion: 'v1',
        kind: 'Event',
        metadata: { name: 'node-1.17979cfe3d85cd15', namespace: 'default' },
        involvedObject: { kind: 'Node', name: 'node-1', uid: 'uid-1', apiVersion: 'v1' },
        reason: 'OOMKilling',
        message: 'usage over 90%: Killed process 1234 (foo) %s %d',
        source: { component: 'kernel-monitor', host: 'node-1' },
        firstTimestamp: '2026-08-01T12:00:00Z',
        lastTimestamp: '2026-08-01T12:00:00Z',
        count: 1,
        type: 'Warning',
        reportingComponent: 'kernel-monitor',
        reportingInstance: 'node-1',
      });
      assert.doesNotMatch(reqs[0]?.body ?? '', /eventTime/);
      assert.equal(created.resourceVersion, '4711');
      assert.equal(created.name, 'node-1.17979cfe3d85cd15');
      assert.equal(created.count, 1);
      assert.equal(created.firstTimestamp, Date.UTC(2026, 7, 1, 12, 0, 0));
      assert.deepEqual(created.involvedObject, event().involvedObject);
    });
  });

  it('patches exactly {count, lastTimestamp, message} as a strategic merge', async () => {
    const handler: Handler = (_req, res) =>
      json(res, 200, {
        ...eventJson(event()),
        metadata: { name: 'node-1.17979cfe3d85cd15', namespace: 'default', resourceVersion: '4712' },
        count: 3,
        firstTimestamp: '2026-08-01T12:00:00Z',
        lastTimestamp: '2026-08-01T12:05:00Z',
        message: 'again 100%',
      });
    await withServer(handler, async (client, reqs) => {
      const ev = { ...event(), resourceVersion: '4711' };
      const last = Date.UTC(2026, 7, 1, 12, 5, 0, 400);
      const patched = await new KubeEventSink(client).patch(ev, {
        count: 3,
        lastTimestamp: last,
        message: 'again 100%',
      });
      assert.equal(reqs[0]?.method, 'PATCH');
      assert.equal(reqs[0]?.url, '/api/v1/namespaces/default/events/node-1.17979cfe3d85cd15');
      assert.equal(reqs[0]?.headers['content-type'], 'application/strategic-merge-patch+json');
      assert.equal(
        reqs[0]?.body,
        '{"count":3,"lastTimestamp":"2026-08-01T12:05:00Z","message":"again 100%"}',
      );
      assert.deepEqual(
        [
          patched.count,
          patched.resourceVersion,
          patched.message,
          patched.firstTimestamp,
          patched.lastTimestamp,
        ],
        [3, '4712', 'again 100%', Date.UTC(2026, 7, 1, 12), Date.UTC(2026, 7, 1, 12, 5)],
      );
    });
  });

  it('omits an empty message from the patch, as client-go does', () => {
    assert.deepEqual(eventPatchJson({ count: 2, lastTimestamp: FIRST, message: '' }), {
      count: 2,
      lastTimestamp: '2026-08-01T12:00:00Z',
    });
  });

  it('falls back to what it sent when the server omits fields', async () => {
    await withServer(
      (_req, res) => json(res, 201, {}),
      async (client) => {
        const ev = event({ count: 4 });
        assert.deepEqual(await new KubeEventSink(client).create(ev), ev);
      },
    );
  });

  it('sends an empty event namespace to "default"', async () => {
    await withServer(echo, async (client, reqs) => {
      await new KubeEventSink(client).create(event({ namespace: '' }));
      assert.equal(reqs[0]?.url, '/api/v1/namespaces/default/events');
    });
  });
});

describe('KubeEventsV1Sink', () => {
  it('creates under events.k8s.io/v1 and patches as a strategic merge, returning the server JSON', async () => {
    const handler: Handler = (req, res) => json(res, req.method === 'POST' ? 201 : 200, { seen: req.method });
    await withServer(handler, async (client, reqs) => {
      const sink = new KubeEventsV1Sink(client);
      const ev = {
        metadata: { name: 'node-1.abc', namespace: 'default' },
        eventTime: '2026-08-01T12:00:00.123000Z',
        note: '100% full',
      };
      assert.deepEqual(await sink.create(ev), { seen: 'POST' });
      const series = { series: { count: 2, lastObservedTime: '2026-08-01T12:01:00.000000Z' } };
      assert.deepEqual(await sink.patch('default', 'node-1.abc', series), { seen: 'PATCH' });
      assert.deepEqual(
        reqs.map((r) => [r.method, r.url, r.headers['content-type']]),
        [
          ['POST', '/apis/events.k8s.io/v1/namespaces/default/events', 'application/json'],
          [
            'PATCH',
            '/apis/events.k8s.io/v1/namespaces/default/events/node-1.abc',
            'application/strategic-merge-patch+json',
          ],
        ],
      );
      assert.deepEqual(JSON.parse(reqs[0]?.body ?? ''), {
        apiVersion: 'events.k8s.io/v1',
        kind: 'Event',
        ...ev,
      });
      assert.equal(reqs[1]?.body, JSON.stringify(series));
    });
  });
});

describe('TypedEventsV1Sink', () => {
  const regarding = { apiVersion: 'v1', kind: 'Node', name: 'node-1', namespace: '', uid: 'uid-1' };
  const v1Event: EventsV1Event = {
    name: 'node-1.abc',
    namespace: 'default',
    eventTime: Date.UTC(2026, 7, 1, 12, 0, 0, 123),
    series: { count: 2, lastObservedTime: Date.UTC(2026, 7, 1, 12, 1, 0, 5) },
    reportingController: 'node-problem-detector',
    reportingInstance: 'node-1',
    action: 'Detected',
    reason: 'OOMKilling',
    regarding,
    note: 'over 90%',
    type: 'Warning',
  };

  it('writes 6-digit MicroTimes and reads the server copy back', async () => {
    const stored = (req: RecordedRequest) => {
      const body = JSON.parse(req.body) as Record<string, unknown>;
      return { ...body, metadata: { ...(body.metadata as object), resourceVersion: '9' } };
    };
    await withServer(
      (req, res) => json(res, 201, stored(req)),
      async (client, reqs) => {
        const created = await new TypedEventsV1Sink(new KubeEventsV1Sink(client)).create(v1Event);
        const sent = JSON.parse(reqs[0]?.body ?? '') as Record<string, unknown>;
        assert.equal(sent.eventTime, '2026-08-01T12:00:00.123000Z');
        assert.deepEqual(sent.series, { count: 2, lastObservedTime: '2026-08-01T12:01:00.005000Z' });
        assert.deepEqual(sent.regarding, { kind: 'Node', name: 'node-1', uid: 'uid-1', apiVersion: 'v1' });
        assert.equal('deprecatedCount' in sent || 'deprecatedSource' in sent, false);
        assert.deepEqual(created, { ...v1Event, resourceVersion: '9' });
      },
    );
  });

  it('patches only the series, with (name, namespace) mapped to the raw (namespace, name)', async () => {
    const server = { ...eventsV1Json(v1Event), metadata: { name: 'node-1.abc', namespace: 'default' } };
    await withServer(
      (_req, res) =>
        json(res, 200, { ...server, series: { count: 3, lastObservedTime: '2026-08-01T12:02:00.000000Z' } }),
      async (client, reqs) => {
        const sink = new TypedEventsV1Sink(new KubeEventsV1Sink(client));
        const last = Date.UTC(2026, 7, 1, 12, 2);
        const patched = await sink.patch('node-1.abc', 'default', {
          series: { count: 3, lastObservedTime: last },
        });
        assert.equal(reqs[0]?.url, '/apis/events.k8s.io/v1/namespaces/default/events/node-1.abc');
        assert.equal(
          reqs[0]?.body,
          '{"series":{"count":3,"lastObservedTime":"2026-08-01T12:02:00.000000Z"}}',
        );
        assert.deepEqual(patched, { ...v1Event, series: { count: 3, lastObservedTime: last } });
      },
    );
  });
});
