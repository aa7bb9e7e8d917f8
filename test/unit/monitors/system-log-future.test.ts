import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { FakeClock } from '../../../src/core/clock.ts';
import { createRegistry } from '../../../src/core/metrics.ts';
import type { LogLine, Status } from '../../../src/core/types.ts';
import { ProblemMetrics } from '../../../src/metrics/problem-metrics.ts';
import { SystemLogMonitor } from '../../../src/monitors/system-log/monitor.ts';
import type { LinesHandler, LogSource } from '../../../src/sources/source.ts';
import { logConfig } from '../sources/harness.ts';

const T0 = Date.UTC(2026, 0, 1);
const CLEAR_AFTER = 10 * 60_000;

/** A kubelet-like monitor whose condition clears 10 minutes after its last matching line. */
function setup() {
  const clock = new FakeClock(T0);
  const registry = createRegistry();
  let push: LinesHandler = () => {};
  const source: LogSource = {
    start: (onLines) => {
      push = onLines;
    },
    stop: async () => {},
    health: () => ({ up: true, healthy: true }),
  };
  const config = logConfig({
    conditions: [{ type: 'Broken', reason: 'Fine', message: 'fine', clearAfterMs: CLEAR_AFTER }],
    rules: [{ type: 'permanent', condition: 'Broken', reason: 'Bad', pattern: 'bad thing.*' }],
  });
  const monitor = new SystemLogMonitor(config, source, {
    clock,
    registry,
    problemMetrics: new ProblemMetrics(registry),
  });
  const statuses: Status[] = [];
  void monitor.start((s) => statuses.push(s));
  const broken = () => statuses.at(-1)?.conditions.find((c) => c.type === 'Broken');
  const feed = (line: LogLine) => push([line]);
  const future = async () =>
    (await registry.getSingleMetric('npd_log_lines_future_timestamp_total')?.get())?.values[0]?.value ?? 0;
  return { clock, monitor, broken, feed, future };
}

describe('SystemLogMonitor: lines stamped in the future', () => {
  it('counts a line stamped 2035 from when it was read: clearAfter clears it 10 minutes later', async () => {
    const h = setup();
    h.feed({ timestamp: Date.UTC(2035, 0, 1), message: 'bad thing happened' });
    assert.equal(h.broken()?.status, 'True');
    assert.equal(h.broken()?.transition, T0, 'the transition is when it was read, not 2035');
    assert.equal(await h.future(), 1);
    h.clock.advance(CLEAR_AFTER - 1000);
    assert.equal(h.broken()?.status, 'True');
    h.clock.advance(2000);
    assert.equal(h.broken()?.status, 'False', 'cleared 10 minutes after it was read');
    await h.monitor.stop();
  });

  it('keeps the own time of a line from the past, and counts nothing for it', async () => {
    const h = setup();
    h.feed({ timestamp: T0 - 5 * 60_000, message: 'bad thing happened' });
    assert.equal(h.broken()?.transition, T0 - 5 * 60_000);
    assert.equal(await h.future(), 0);
    h.clock.advance(5 * 60_000 + 1000);
    assert.equal(
      h.broken()?.status,
      'False',
      'clearAfter counted from the line, 5 minutes before it was read',
    );
    await h.monitor.stop();
  });
});
