import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { Registry } from 'prom-client';
import { FakeClock } from '../../../../src/core/clock.ts';
import {
  createEventPipeline,
  type EventPipelineOptions,
  nodeRef,
} from '../../../../src/events/record/index.ts';
import type { KubeEvent } from '../../../../src/events/record/types.ts';
import { captureLogger, drain, FakeSink, metricValue } from './helpers.ts';

const T0 = Date.UTC(2026, 0, 1);

function setup(extra: Partial<EventPipelineOptions> = {}) {
  const clock = new FakeClock(T0);
  const registry = new Registry();
  const { logger, records } = captureLogger();
  const sink = new FakeSink();
  const lines: string[] = [];
  const pipeline = createEventPipeline({
    clock,
    registry,
    logger,
    sink,
    node: nodeRef('node-1', 'uid-1'),
    host: 'node-1',
    random: () => 0.5,
    logLine: (line) => lines.push(line),
    ...extra,
  });
  return { clock, registry, records, sink, lines, pipeline };
}

describe('createEventPipeline', () => {
  it('gives one recorder per source and writes its events to the sink and both logs', async () => {
    const t = setup();
    const kernel = t.pipeline.recorderFor('kernel-monitor');
    assert.equal(t.pipeline.recorderFor('kernel-monitor'), kernel);
    kernel.event('Warning', 'OOMKilling', 'Killed process 1');
    await drain();
    assert.equal(t.sink.verbs(), 'create');
    const written = t.sink.calls[0]!.event;
    assert.equal(written.source.component, 'kernel-monitor');
    assert.equal(written.namespace, 'default');
    assert.deepEqual(written.involvedObject, nodeRef('node-1', 'uid-1'));
    assert.deepEqual(t.lines, ["Event(Node/node-1): type: 'Warning' reason: 'OOMKilling' Killed process 1"]);
    assert.equal(t.records.filter((r) => r.msg === 'Event occurred').length, 1);
  });

  it('keeps correlation per source, and names unique across sources in one millisecond', async () => {
    const t = setup();
    const a = t.pipeline.recorderFor('a');
    const b = t.pipeline.recorderFor('b');
    for (let i = 0; i < 26; i++) a.event('Warning', `R${i}`, 'm');
    b.event('Warning', 'R', 'm');
    await drain();
    const bySource = (s: string) => t.sink.calls.filter((c) => c.event.source.component === s);
    assert.equal(bySource('a').length, 25, "a's 26th event is spam-filtered");
    assert.equal(bySource('b').length, 1, 'b has its own bucket');
    assert.equal(new Set(t.sink.calls.map((c) => c.event.name)).size, 26);
    assert.equal(await metricValue(t.registry, 'npd_events_spam_filtered_total', { source: 'a' }), 1);
  });

  it('logs without a sink', async () => {
    const t = setup({ sink: undefined });
    t.pipeline.recorderFor('s').event('Normal', 'R', 'm');
    await drain();
    assert.equal(t.lines.length, 1);
  });

  it('plain lines go to debug by default', async () => {
    const t = setup({ logLine: undefined });
    t.pipeline.recorderFor('s').event('Normal', 'R', 'm');
    await drain();
    const plain = t.records.find((r) => r.msg.startsWith('Event(Node/node-1)'));
    assert.equal(plain?.level, 20);
  });

  it('shutdown tries queued events once within the grace period, then refuses new ones', async () => {
    const t = setup();
    t.sink.respond = () => new Promise<KubeEvent>(() => {});
    const rec = t.pipeline.recorderFor('s');
    for (let i = 0; i < 3; i++) rec.event('Warning', 'R', `m${i}`);
    await drain();
    let done = false;
    void t.pipeline.shutdown(2000).then(() => {
      done = true;
    });
    await drain();
    assert.equal(done, false);
    t.clock.advance(2000);
    await drain();
    assert.equal(done, true);
    assert.equal(t.sink.calls.length, 1);
    assert.equal(await metricValue(t.registry, 'npd_events_dropped_total', { point: 'flush' }), 2);
    assert.equal(rec.event('Warning', 'R', 'late'), false);
    assert.equal(t.pipeline.recorderFor('late-source').event('Warning', 'R', 'm'), false);
    assert.equal(await metricValue(t.registry, 'npd_events_dropped_total', { point: 'stopped' }), 2);
  });
});
