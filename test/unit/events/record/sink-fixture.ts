import { Registry } from 'prom-client';
import { FakeClock } from '../../../../src/core/clock.ts';
import { SinkError } from '../../../../src/core/errors.ts';
import { Broadcaster } from '../../../../src/events/record/broadcaster.ts';
import { type SinkLoopOptions, startRecordingToSink } from '../../../../src/events/record/sink-loop.ts';
import type { KubeEvent } from '../../../../src/events/record/types.ts';
import { captureLogger, drain, FakeSink, metricValue, type SinkCall } from './helpers.ts';

export const T0 = Date.UTC(2026, 0, 1);

/** A sink loop on a fake clock and fake sink, hanging off its own broadcaster. */
export function setup(
  respond?: (call: SinkCall) => KubeEvent | Error | Promise<KubeEvent>,
  extra: Partial<SinkLoopOptions> = {},
) {
  const clock = new FakeClock(T0);
  const registry = new Registry();
  const { logger, records } = captureLogger();
  const sink = new FakeSink(respond);
  const broadcaster = new Broadcaster<KubeEvent>({ registry, logger, source: 'kernel-monitor' });
  const loop = startRecordingToSink(broadcaster, {
    source: 'kernel-monitor',
    sink,
    clock,
    registry,
    logger,
    random: () => 0.5,
    ...extra,
  });
  const metric = (name: string, labels: Record<string, string> = {}) =>
    metricValue(registry, `npd_events_${name}`, { source: 'kernel-monitor', ...labels });
  /** Advances the fake clock, then lets the loop react. */
  const advance = async (ms: number) => {
    clock.advance(ms);
    await drain();
  };
  return { clock, registry, records, sink, broadcaster, loop, metric, advance };
}

export const transport = (): SinkError => new SinkError('connect ECONNREFUSED');

/** Tracks whether a promise has settled without awaiting it. */
export function settled(p: Promise<unknown>): { done: boolean } {
  const state = { done: false };
  void p.then(() => {
    state.done = true;
  });
  return state;
}
