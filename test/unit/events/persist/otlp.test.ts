import assert from 'node:assert/strict';
import { afterEach, describe, it } from 'node:test';
import { OtlpSink, type OtlpSinkOptions, otlpLogsUrl } from '../../../../src/events/persist/otlp.ts';
import { decodeFields, intOf, messagesOf, stringOf } from '../../../../src/host/protocols/protobuf.ts';
import {
  attachSink,
  drain,
  kubeEvent,
  overflowThenShutdown,
  type Reply,
  sinkHarness,
  until,
} from './helpers.ts';

let closeAll: (() => Promise<void>) | undefined;

afterEach(async () => {
  await closeAll?.();
  closeAll = undefined;
});

const SOURCE = { nodeName: 'node-1', serviceName: 'node-problem-detector', serviceVersion: '9.9.9' };

async function setup(reply: Reply, extra: Partial<OtlpSinkOptions> = {}) {
  const t = await sinkHarness(
    reply,
    ({ url, ...deps }) =>
      new OtlpSink({
        ...deps,
        endpoint: new URL(url).origin,
        protocol: 'http/protobuf',
        headers: { Authorization: 'Bearer s3cr3t' },
        source: SOURCE,
        ...extra,
      }),
  );
  closeAll = t.closeAll;
  return t;
}

const json = (body: unknown) => ({
  status: 200,
  headers: { 'content-type': 'application/json' },
  body: JSON.stringify(body),
});

/** Reads the one record of an ExportLogsServiceRequest in protobuf, as far as the checks need. */
function decodeRequest(raw: Buffer) {
  const resourceLogs = messagesOf(decodeFields(raw), 1);
  assert.equal(resourceLogs.length, 1);
  const rl = decodeFields(resourceLogs[0]!);
  const kvs = (list: Buffer[]) =>
    Object.fromEntries(
      list.map((kv) => {
        const f = decodeFields(kv);
        const v = decodeFields(messagesOf(f, 2)[0]!);
        return [stringOf(f, 1), v.has(3) ? Number(intOf(v, 3)) : stringOf(v, 1)];
      }),
    );
  const resource = kvs(messagesOf(decodeFields(messagesOf(rl, 1)[0]!), 1));
  const scopeLogs = messagesOf(rl, 2);
  assert.equal(scopeLogs.length, 1);
  const records = messagesOf(decodeFields(scopeLogs[0]!), 2);
  assert.equal(records.length, 1, 'one record per request');
  const lr = decodeFields(records[0]!);
  return {
    resource,
    attributes: kvs(messagesOf(lr, 6)),
    severityNumber: Number(intOf(lr, 2)),
    severityText: stringOf(lr, 3),
    body: stringOf(decodeFields(messagesOf(lr, 5)[0]!), 1),
    time: intOf(lr, 1),
  };
}

describe('otlpLogsUrl', () => {
  it('appends /v1/logs to a base endpoint, and keeps a path that already ends in it', () => {
    assert.equal(otlpLogsUrl('http://c:4318').href, 'http://c:4318/v1/logs');
    assert.equal(otlpLogsUrl('http://c:4318/').href, 'http://c:4318/v1/logs');
    assert.equal(otlpLogsUrl('https://gw/otlp/').href, 'https://gw/otlp/v1/logs');
    assert.equal(otlpLogsUrl('https://gw/otlp/v1/logs').href, 'https://gw/otlp/v1/logs');
  });
});

describe('OtlpSink', () => {
  it('POSTs one protobuf log record to /v1/logs with k8s resource attributes and the headers', async () => {
    // What a Collector answers: an ExportLogsServiceResponse with an empty partial_success.
    const answer = Buffer.from([0x0a, 0x00]);
    const t = await setup(() => ({
      status: 200,
      headers: { 'content-type': 'application/x-protobuf' },
      body: answer,
    }));
    await t.sink.write(kubeEvent({ count: 1 }));
    const req = t.srv.requests[0]!;
    assert.equal(req.url, '/v1/logs');
    assert.equal(req.headers['content-type'], 'application/x-protobuf');
    assert.equal(req.headers.authorization, 'Bearer s3cr3t');
    const rec = decodeRequest(req.raw);
    assert.deepEqual(rec.resource, {
      'service.name': 'node-problem-detector',
      'service.version': '9.9.9',
      'k8s.node.name': 'node-1',
      'k8s.node.uid': 'uid-1',
      'k8s.object.kind': 'Node',
      'k8s.object.name': 'node-1',
      'k8s.object.uid': 'uid-1',
      'k8s.object.api_version': 'v1',
    });
    assert.equal(rec.attributes['k8s.event.reason'], 'OOMKilling');
    assert.equal(rec.attributes['k8s.event.count'], 1);
    assert.equal(rec.attributes['k8s.event.type'], 'Warning');
    assert.equal(rec.severityNumber, 13);
    assert.equal(rec.severityText, 'WARN');
    assert.equal(rec.body, 'Killed process 1234 (foo)');
    assert.equal(rec.time, BigInt(Date.parse('2026-01-01T00:00:00Z')) * 1_000_000n);
    assert.equal(await t.metric('writes', { result: 'success' }), 1);
    assert.equal(JSON.stringify(t.records).includes('s3cr3t'), false, 'header values never logged');
  });

  it('sends OTLP/JSON with Normal events at INFO when asked to', async () => {
    const t = await setup(() => json({ partialSuccess: {} }), { protocol: 'http/json' });
    await t.sink.write(kubeEvent({ type: 'Normal', reason: 'NTPIsUp' }));
    const req = t.srv.requests[0]!;
    assert.equal(req.headers['content-type'], 'application/json');
    const body = JSON.parse(req.body);
    const record = body.resourceLogs[0].scopeLogs[0].logRecords[0];
    assert.equal(record.severityNumber, 9);
    assert.equal(record.severityText, 'INFO');
    assert.equal(record.timeUnixNano, String(BigInt(Date.parse('2026-01-01T00:00:00Z')) * 1_000_000n));
    assert.deepEqual(
      record.attributes.find((a: { key: string }) => a.key === 'k8s.event.count'),
      { key: 'k8s.event.count', value: { intValue: '1' } },
    );
    assert.equal(await t.metric('writes', { result: 'success' }), 1);
  });

  it('counts partialSuccess.rejectedLogRecords > 0 as rejected and gives up (JSON)', async () => {
    const t = await setup(
      () => json({ partialSuccess: { rejectedLogRecords: '1', errorMessage: 'bad record' } }),
      { protocol: 'http/json' },
    );
    await t.sink.write(kubeEvent());
    assert.equal(t.srv.requests.length, 1, 'a partial success is never retried');
    assert.equal(await t.metric('writes', { result: 'success' }), 0, 'never a success');
    assert.equal(await t.metric('writes', { result: 'rejected' }), 1);
    assert.equal(await t.metric('given_up'), 1);
    assert.ok(t.records.some((r) => /bad record/.test(String(r.refusal))));
  });

  it('counts partialSuccess.rejectedLogRecords > 0 as rejected (protobuf answer)', async () => {
    // ExportLogsServiceResponse{partial_success: {rejected_log_records: 1, error_message: "x"}}
    const answer = Buffer.from([0x0a, 0x05, 0x08, 0x01, 0x12, 0x01, 0x78]);
    const t = await setup(() => ({
      status: 200,
      headers: { 'content-type': 'application/x-protobuf' },
      body: answer,
    }));
    await t.sink.write(kubeEvent());
    assert.equal(await t.metric('writes', { result: 'success' }), 0);
    assert.equal(await t.metric('writes', { result: 'rejected' }), 1);
    assert.equal(await t.metric('given_up'), 1);
  });

  it('accepts an empty partialSuccess, and refuses a 200 that is not an export response', async () => {
    const t = await setup((_req, i) =>
      i === 0
        ? json({ partialSuccess: {} })
        : { status: 200, headers: { 'content-type': 'text/html' }, body: '<html>' },
    );
    await t.sink.write(kubeEvent());
    await t.sink.write(kubeEvent());
    assert.equal(await t.metric('writes', { result: 'success' }), 1);
    assert.equal(await t.metric('writes', { result: 'rejected' }), 1);
  });

  it('retries 503 after a backoff and succeeds; 500 is not retried (OTLP/HTTP spec)', async () => {
    const t = await setup((_req, i) => ({ status: [503, 200, 500][i] ?? 200 }));
    const done = t.sink.write(kubeEvent());
    await until(async () => (await t.metric('writes', { result: 'failure' })) === 1, 'first failure');
    await drain();
    t.clock.advance(500);
    await done;
    assert.equal(await t.metric('retries'), 1);
    assert.equal(await t.metric('writes', { result: 'success' }), 1);
    await t.sink.write(kubeEvent());
    assert.equal(t.srv.requests.length, 3);
    assert.equal(await t.metric('writes', { result: 'rejected' }), 1);
    assert.equal(await t.metric('given_up'), 1);
  });

  it('times a request out on the injected clock, counts it and retries', async () => {
    const t = await setup((_req, i) => (i === 0 ? undefined : { status: 200 }), { timeoutMs: 2000 });
    const done = t.sink.write(kubeEvent());
    await until(() => t.srv.requests.length === 1, 'request');
    t.clock.advance(2000);
    await until(async () => (await t.metric('writes', { result: 'failure' })) === 1, 'timeout');
    await drain();
    t.clock.advance(500);
    await done;
    assert.equal(await t.metric('retries'), 1);
    assert.equal(await t.metric('writes', { result: 'success' }), 1);
    assert.ok(t.records.some((r) => /timed out/.test(String(r.err))));
  });

  it('counts queue overflow and shutdown leftovers under watcher="otlp"', async () => {
    const t = await setup(() => undefined, { timeoutMs: 60_000 });
    const drops = await overflowThenShutdown(t, 1, 4);
    assert.deepEqual(drops, { atQueue: 2, atFlush: 1 }, 'one in flight, one queued, two dropped');
    t.srv.release(200);
  });

  it('delivers what is queued when shutdown comes within the grace period', async () => {
    const t = await setup((_req, i) => (i === 0 ? undefined : { status: 200, body: '' }), {
      timeoutMs: 60_000,
    });
    const { broadcaster: b, watcher, dropped } = attachSink(t.sink, t);
    for (let i = 0; i < 3; i++) b.actionOrDrop(kubeEvent({ message: `m${i}` }));
    await until(() => t.srv.requests.length === 1, 'first request');
    const flushed = watcher.flush(5000);
    await b.shutdown();
    t.srv.release(200);
    await flushed;
    assert.equal(t.srv.requests.length, 3);
    assert.equal(await t.metric('writes', { result: 'success' }), 3);
    assert.equal(await t.metric('given_up'), 0);
    assert.equal(await dropped('flush'), 0);
  });
});
