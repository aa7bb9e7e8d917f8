/**
 * An API outage of 2 minutes under an event flood (issue 41 item 3): the queue in front of the API sink
 * stays bounded (client-go's 1,000), and every event recorded is accounted for in a metric: written,
 * spam-filtered, given up or dropped. Nothing is lost silently, and nothing is given up: the head event
 * is held through the outage (younger than the 1 h hold) and written after it.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { Registry } from 'prom-client';
import { FakeClock } from '../../../../src/core/clock.ts';
import { SinkError } from '../../../../src/core/errors.ts';
import { createEventPipeline, nodeRef } from '../../../../src/events/record/index.ts';
import { DEFAULT_SPAM_BURST } from '../../../../src/events/record/spam-filter.ts';
import { captureLogger, drain, FakeSink } from './helpers.ts';

const T0 = Date.UTC(2026, 0, 1);
const SOURCE = 'kernel-monitor';

async function total(registry: Registry, name: string, labels: Record<string, string> = {}): Promise<number> {
  const metric = registry.getSingleMetric(name);
  if (!metric) return 0;
  const { values } = await metric.get();
  return values
    .filter((v) => Object.entries(labels).every(([k, l]) => v.labels[k] === l))
    .reduce((sum, v) => sum + v.value, 0);
}

function outagePipeline() {
  const clock = new FakeClock(T0);
  const registry = new Registry();
  let down = false;
  const sink: FakeSink = new FakeSink((call) =>
    down ? new SinkError('connect ECONNREFUSED') : sink.echo(call),
  );
  const pipeline = createEventPipeline({
    clock,
    registry,
    logger: captureLogger().logger,
    sink,
    node: nodeRef('node-1', 'uid-1'),
    host: 'node-1',
    random: () => 0.5,
    logLine: () => {},
  });
  const step = async (ms: number) => {
    for (let left = ms; left > 0; left -= 1000) {
      clock.advance(Math.min(1000, left));
      await drain();
    }
  };
  return { clock, registry, sink, pipeline, step, setDown: (v: boolean) => (down = v) };
}

describe('event pipeline through a 2 minute API outage', () => {
  it('keeps the API queue at 1,000 and accounts for every event in a metric', async () => {
    const t = outagePipeline();
    const recorder = t.pipeline.recorderFor(SOURCE);
    t.setDown(true);
    let offered = 0;
    for (let s = 0; s < 120; s++) {
      if (s % 10 === 0) {
        recorder.event('Warning', 'TaskHung', 'task docker:4321 blocked for more than 120 seconds.');
        offered++;
      }
      // A flood in the first seconds: 6 x 500 distinct events, more than the queue holds.
      if (s < 6) {
        for (let i = 0; i < 500; i++) recorder.event('Warning', `Flood${s}x${i}`, 'm');
        offered += 500;
      }
      await t.step(1000);
    }
    const droppedApi = await total(t.registry, 'npd_events_dropped_total', {
      point: 'watcher',
      watcher: 'api',
    });
    assert.ok(droppedApi >= 3000 - 1000 - 1, `${droppedApi} dropped at the API watcher's queue of 1,000`);
    t.setDown(false);
    await t.step(10 * 60_000);
    const recorded = await total(t.registry, 'npd_events_recorded_total', { source: SOURCE });
    const droppedIncoming = await total(t.registry, 'npd_events_dropped_total', { point: 'incoming' });
    const written = await total(t.registry, 'npd_events_written_total', { source: SOURCE });
    const filtered = await total(t.registry, 'npd_events_spam_filtered_total', { source: SOURCE });
    const givenUp = await total(t.registry, 'npd_events_given_up_total', { source: SOURCE });
    assert.equal(recorded + droppedIncoming, offered, 'every event offered was queued or counted as dropped');
    assert.equal(
      written + filtered + givenUp + droppedApi,
      recorded,
      `written ${written} + spam-filtered ${filtered} + given up ${givenUp} + dropped ${droppedApi}`,
    );
    assert.equal(givenUp, 0, 'the head event was held through the outage, not given up after 12 tries');
    assert.equal(
      written,
      DEFAULT_SPAM_BURST,
      'writing resumed after the outage: the head, then the queue until the spam bucket ran dry',
    );
  });
});
