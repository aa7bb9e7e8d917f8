import assert from 'node:assert/strict';
import * as fsp from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterEach, beforeEach, describe, it } from 'node:test';
import { Registry } from 'prom-client';
import { FakeClock } from '../../../../src/core/clock.ts';
import { silentLogger } from '../../../../src/core/logger.ts';
import { FileSink } from '../../../../src/events/persist/file.ts';
import { type PersistSink, persistWatcher } from '../../../../src/events/persist/watcher.ts';
import { WebhookSink } from '../../../../src/events/persist/webhook.ts';
import { createEventPipeline, type ExtraSinkFactory, nodeRef } from '../../../../src/events/record/index.ts';
import type { KubeEvent } from '../../../../src/events/record/types.ts';
import { FakeSink } from '../record/helpers.ts';
import { drain, metricValue, startServer, type TestServer, until } from './helpers.ts';

let dir = '';
let server: TestServer | undefined;

beforeEach(async () => {
  dir = await fsp.mkdtemp(path.join(os.tmpdir(), 'npd-pipeline-sinks-'));
});

afterEach(async () => {
  await server?.close();
  server = undefined;
  await fsp.rm(dir, { recursive: true, force: true });
});

function build(
  extraWatchers: readonly ExtraSinkFactory[],
  clock = new FakeClock(),
  registry = new Registry(),
) {
  const api = new FakeSink();
  const pipeline = createEventPipeline({
    clock,
    registry,
    logger: silentLogger(),
    sink: api,
    node: nodeRef('node-1', 'uid-1'),
    host: 'node-1',
    random: () => 0.5,
    logLine: () => {},
    extraWatchers,
  });
  return { api, pipeline, clock, registry };
}

describe('createEventPipeline with extra sinks', () => {
  it('delivers every occurrence from every source, uncorrelated, while the API sink aggregates', async () => {
    const clock = new FakeClock();
    const registry = new Registry();
    const logger = silentLogger();
    const file = path.join(dir, 'events.jsonl');
    const fileSink = new FileSink({ path: file, nodeName: 'node-1', registry, logger });
    const seen: KubeEvent[] = [];
    const recording: PersistSink = {
      name: 'recording',
      write: async (event) => {
        seen.push(event);
      },
      stopRetrying: () => {},
      close: async () => {},
    };
    const deps = { clock, registry, logger };
    const t = build([persistWatcher(fileSink, deps), persistWatcher(recording, deps)], clock, registry);
    const kernel = t.pipeline.recorderFor('kernel-monitor');
    for (let i = 0; i < 3; i++) kernel.event('Warning', 'OOMKilling', 'Killed process 1');
    t.pipeline.recorderFor('docker-monitor').event('Warning', 'CorruptDockerImage', 'bad layer');
    await until(() => seen.length === 4, 'recording sink');
    await t.pipeline.shutdown(1000);
    const kernelVerbs = t.api.calls
      .filter((c) => c.event.source.component === 'kernel-monitor')
      .map((c) => c.verb);
    assert.deepEqual(kernelVerbs, ['create', 'patch', 'patch'], 'the API sink correlates repeats');
    const kernelSeen = seen.filter((e) => e.source.component === 'kernel-monitor');
    assert.deepEqual(
      kernelSeen.map((e) => e.count),
      [1, 1, 1],
    );
    assert.equal(seen.filter((e) => e.source.component === 'docker-monitor').length, 1);
    const lines = (await fsp.readFile(file, 'utf8'))
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l));
    assert.equal(lines.length, 4);
    assert.equal(new Set(lines.map((l) => l.metadata.name)).size, 4, 'each occurrence keeps its own name');
  });

  it('shutdown cuts a webhook retry short and resolves within the grace period', async () => {
    server = await startServer(() => ({ status: 503 }));
    const clock = new FakeClock();
    const registry = new Registry();
    const logger = silentLogger();
    const webhook = new WebhookSink({ url: server.url, nodeName: 'node-1', clock, registry, logger });
    const t = build([persistWatcher(webhook, { clock, registry, logger })], clock, registry);
    t.pipeline.recorderFor('kernel-monitor').event('Warning', 'R', 'm');
    const gaveUp = () => metricValue(registry, 'npd_event_sink_given_up_total', { sink: 'webhook' });
    await until(() => server?.requests.length === 1, 'first POST');
    await drain();
    await t.pipeline.shutdown(5000);
    assert.equal(await gaveUp(), 1);
    assert.equal(server.requests.length, 1, 'no retry after shutdown');
    await webhook.close();
  });
});
