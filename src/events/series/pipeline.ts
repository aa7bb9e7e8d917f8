import type { Registry } from 'prom-client';
import type { Clock } from '../../core/clock.ts';
import type { Logger } from '../../core/logger.ts';
import { zeroed } from '../../core/metrics.ts';
import { recorderMetrics } from '../record/metrics.ts';
import { monotonicNanos, type NanoSource } from '../record/names.ts';
import type { EventType } from '../record/types.ts';
import {
  type EventsV1Event,
  type EventsV1Sink,
  makeEventsV1Event,
  type V1ObjectReference,
} from './events.ts';
import { EventsV1Recorder } from './recorder.ts';

export interface EventsV1PipelineOptions {
  readonly clock: Clock;
  readonly registry: Registry;
  readonly logger: Logger;
  readonly sink: EventsV1Sink;
  readonly node: V1ObjectReference;
  readonly host: string;
  readonly namespace: string;
}

const QUEUE_LIMIT = 1000;

interface SourceQueue {
  readonly recorder: EventsV1Recorder;
  readonly queue: (() => Promise<void>)[];
  running: boolean;
}

/**
 * --events-api=events.k8s.io: one tools/events recorder per source. Recording never blocks: each
 * source has a bounded queue drained one event at a time, like the core/v1 watcher.
 */
export function createEventsV1Pipeline(opts: EventsV1PipelineOptions) {
  const nanos = monotonicNanos(opts.clock);
  const dropped = recorderMetrics(opts.registry).dropped;
  const sources = new Map<string, SourceQueue>();
  return {
    recorderFor(source: string) {
      return {
        event(
          type: EventType,
          reason: string,
          message: string,
          annotations?: Readonly<Record<string, string>>,
        ): boolean {
          const q = queueFor(sources, opts, source);
          if (q.queue.length >= QUEUE_LIMIT) {
            dropped.inc({ point: 'watcher', source, watcher: 'events-v1' });
            return false;
          }
          const made = v1Event(opts, nanos, source, { type, reason, message });
          const ev = annotations === undefined ? made : { ...made, annotations };
          enqueue(q, () => q.recorder.record(ev));
          return true;
        },
      };
    },
    async shutdown(): Promise<void> {
      for (const q of sources.values()) q.recorder.stop();
    },
  };
}

/** A source's recorder starts with its first event, so silent sources cost nothing. */
function queueFor(
  sources: Map<string, SourceQueue>,
  opts: EventsV1PipelineOptions,
  source: string,
): SourceQueue {
  let q = sources.get(source);
  if (!q) {
    const recorder = new EventsV1Recorder({ ...opts, source });
    zeroed(recorderMetrics(opts.registry).dropped, { point: 'watcher', source, watcher: 'events-v1' });
    recorder.start();
    q = { recorder, queue: [], running: false };
    sources.set(source, q);
  }
  return q;
}

function v1Event(
  opts: EventsV1PipelineOptions,
  nanos: NanoSource,
  source: string,
  { type, reason, message }: { type: EventType; reason: string; message: string },
): EventsV1Event {
  const init = { regarding: opts.node, type, reason, action: reason, note: message };
  return makeEventsV1Event(
    { ...init, reportingController: source, reportingInstance: opts.host, namespace: opts.namespace },
    opts.clock.now(),
    nanos(),
  );
}

function enqueue(q: SourceQueue, task: () => Promise<void>): void {
  q.queue.push(task);
  if (!q.running) void drain(q);
}

async function drain(q: SourceQueue): Promise<void> {
  q.running = true;
  for (let next = q.queue.shift(); next; next = q.queue.shift()) await next();
  q.running = false;
}
