import type { Registry } from 'prom-client';
import type { Clock } from '../../core/clock.ts';
import type { Logger } from '../../core/logger.ts';
import { DEFAULT_QUEUE_LENGTH } from '../record/broadcaster.ts';
import type { ExtraSinkFactory, ExtraWatcher } from '../record/index.ts';
import { zeroed } from '../../core/metrics.ts';
import { type RecorderMetrics, recorderMetrics } from '../record/metrics.ts';
import type { KubeEvent } from '../record/types.ts';
import { QueueWatcher } from '../record/watcher.ts';

/** A place events are persisted to besides the API server. One instance serves every source. */
export interface PersistSink {
  /** Watcher and metric label: "webhook" or "file". */
  readonly name: string;
  /** Persists one event, retrying as the sink sees fit; never rejects (failures are counted). */
  write(event: KubeEvent): Promise<void>;
  /** From now on each event is tried once, and a retry wait in progress ends at once. */
  stopRetrying(): void;
  /** Releases sockets or files; whatever is still pending is counted as given up. */
  close(): Promise<void>;
}

export interface PersistWatcherOptions {
  readonly clock: Clock;
  readonly registry: Registry;
  readonly logger: Logger;
  /** Events waiting for this sink, per source; beyond it new events are dropped and counted. */
  readonly queueLength?: number;
}

interface Attached {
  readonly queue: QueueWatcher<KubeEvent>;
  readonly sink: PersistSink;
  readonly opts: PersistWatcherOptions;
  readonly metrics: RecorderMetrics;
  readonly labels: { readonly source: string; readonly watcher: string };
}

/**
 * Hangs `sink` off each source's broadcaster. The broadcaster's own watcher only moves events into a
 * queue owned here, which always drops when full, so a dead webhook receiver never holds up
 * distribution, and with it the API sink and the recorder.
 */
export function persistWatcher(sink: PersistSink, opts: PersistWatcherOptions): ExtraSinkFactory {
  return (broadcaster, source) => {
    const metrics = recorderMetrics(opts.registry);
    const labels = { source, watcher: sink.name };
    zeroed(metrics.dropped, { point: 'flush', ...labels });
    const queue = new QueueWatcher<KubeEvent>({
      name: sink.name,
      joinedAt: 0,
      capacity: opts.queueLength ?? DEFAULT_QUEUE_LENGTH,
      handler: (event) => sink.write(event),
      onError: (err) => {
        metrics.handlerErrors.inc(labels);
        opts.logger.error({ err, ...labels }, 'event sink failed');
      },
      onEnded: () => {},
    });
    const feeder = broadcaster.watch(sink.name, (event) => {
      if (!queue.offer(event)) metrics.dropped.inc({ point: 'watcher', ...labels });
    });
    void feeder.done.then(() => queue.close());
    return flusher({ queue, sink, opts, metrics, labels });
  };
}

function flusher(a: Attached): ExtraWatcher {
  let flushing: Promise<void> | undefined;
  return {
    flush(graceMs) {
      flushing ??= flushWithin(a, graceMs);
      return flushing;
    },
  };
}

function flushWithin(a: Attached, graceMs: number): Promise<void> {
  a.sink.stopRetrying();
  return new Promise<void>((resolve) => {
    const deadline = a.opts.clock.setTimeout(() => {
      const left = a.queue.stop();
      if (left > 0) {
        a.metrics.dropped.inc({ point: 'flush', ...a.labels }, left);
        a.opts.logger.warn(
          { ...a.labels, dropped: left },
          'Shutdown grace period over, dropping events not yet persisted',
        );
      }
      resolve();
    }, graceMs);
    void a.queue.done.then(() => {
      deadline.cancel();
      resolve();
    });
  });
}
