import type { Registry } from 'prom-client';
import { type Clock, systemClock } from '../../core/clock.ts';
import type { Logger } from '../../core/logger.ts';
import { zeroed } from '../../core/metrics.ts';
import { SampledWarning } from '../../core/sampled-warning.ts';
import { type DropPoint, type RecorderMetrics, recorderMetrics } from './metrics.ts';
import { QueueWatcher, type Watcher, type WatchHandler } from './watcher.ts';

export type { Watcher, WatchHandler } from './watcher.ts';

/** tools/record builds its broadcaster with NewLongQueueBroadcaster(1000, DropIfChannelFull). */
export const DEFAULT_QUEUE_LENGTH = 1000;

export interface BroadcasterOptions {
  readonly registry: Registry;
  readonly logger: Logger;
  /** The event source this broadcaster serves, used as a metric label. */
  readonly source: string;
  readonly incomingLength?: number;
  readonly watcherQueueLength?: number;
  /** Paces the dropped-event warning; the system clock by default. */
  readonly clock?: Clock;
}

interface Entry<T> {
  readonly seq: number;
  readonly event: T;
}

/**
 * apimachinery's watch.Broadcaster as tools/record builds it (DropIfChannelFull): producers put events
 * into one bounded incoming queue, and a single asynchronous loop hands each event, in order, to every
 * watcher's bounded queue. A full watcher queue loses the event for that watcher only.
 */
export class Broadcaster<T> {
  private readonly opts: BroadcasterOptions;
  private readonly metrics: RecorderMetrics;
  private readonly incomingLength: number;
  private readonly watcherQueueLength: number;
  private readonly dropWarning: SampledWarning;
  private readonly incoming: Entry<T>[] = [];
  private readonly watchers = new Set<QueueWatcher<T>>();
  private nextSeq = 0;
  private pumping = false;
  private stoppedFlag = false;
  private shutdownSignal: PromiseWithResolvers<void> | undefined;

  constructor(opts: BroadcasterOptions) {
    this.opts = opts;
    this.metrics = recorderMetrics(opts.registry);
    const source = opts.source;
    zeroed(
      this.metrics.dropped,
      { point: 'incoming', source, watcher: '' },
      { point: 'stopped', source, watcher: '' },
    );
    this.incomingLength = opts.incomingLength ?? DEFAULT_QUEUE_LENGTH;
    const clock = opts.clock ?? systemClock;
    // npd_events_dropped_total counts every drop; the log says so once a minute, with how many.
    this.dropWarning = new SampledWarning(
      () => clock.now(),
      (fields) => opts.logger.warn(fields, 'Unable to record event: too many queued events, dropped event'),
    );
    this.watcherQueueLength = opts.watcherQueueLength ?? DEFAULT_QUEUE_LENGTH;
  }

  /** True once shutdown() has been called: no more actions or watches are accepted. */
  get stopped(): boolean {
    return this.stoppedFlag;
  }

  /** Events waiting for distribution. */
  queued(): number {
    return this.incoming.length;
  }

  /** Adds a watcher that sees only events queued after this call, as Go's queued watch marker does. */
  watch(name: string, handler: WatchHandler<T>): Watcher {
    if (this.stoppedFlag) throw new Error('broadcaster already stopped');
    const watcher: QueueWatcher<T> = new QueueWatcher<T>({
      name,
      joinedAt: this.nextSeq,
      capacity: this.watcherQueueLength,
      handler,
      onError: (err) => this.handlerFailed(name, err),
      onEnded: () => this.watchers.delete(watcher),
    });
    this.watchers.add(watcher);
    const source = this.opts.source;
    zeroed(this.metrics.dropped, { point: 'watcher', source, watcher: name });
    zeroed(this.metrics.handlerErrors, { source, watcher: name });
    return watcher;
  }

  /** Never blocks: false when the incoming queue is full or the broadcaster is stopped (both counted). */
  actionOrDrop(event: T): boolean {
    if (this.stoppedFlag) {
      this.drop('stopped');
      return false;
    }
    if (this.incoming.length >= this.incomingLength) {
      this.drop('incoming');
      return false;
    }
    this.enqueue(event);
    return true;
  }

  /**
   * Rejects new actions and watches, distributes everything already queued, then closes every watcher. Resolves when distribution is over; each
   * watcher's `done` says when it has drained its own queue.
   */
  shutdown(): Promise<void> {
    if (this.shutdownSignal) return this.shutdownSignal.promise;
    this.stoppedFlag = true;
    this.shutdownSignal = Promise.withResolvers<void>();
    if (!this.pumping) this.closeAll();
    return this.shutdownSignal.promise;
  }

  private enqueue(event: T): void {
    this.incoming.push({ seq: this.nextSeq++, event });
    if (this.pumping) return;
    this.pumping = true;
    queueMicrotask(() => this.pump());
  }

  private pump(): void {
    for (;;) {
      const entry = this.incoming.shift();
      if (!entry) break;
      this.distribute(entry);
    }
    this.pumping = false;
    if (this.stoppedFlag) this.closeAll();
  }

  private distribute(entry: Entry<T>): void {
    for (const watcher of this.watchers) {
      if (entry.seq < watcher.joinedAt || watcher.offer(entry.event)) continue;
      this.drop('watcher', watcher.name);
    }
  }

  private closeAll(): void {
    for (const watcher of [...this.watchers]) watcher.close();
    this.shutdownSignal?.resolve();
  }

  private drop(point: DropPoint, watcher = ''): void {
    this.metrics.dropped.inc({ point, source: this.opts.source, watcher });
    if (point === 'incoming') this.dropWarning.note(() => ({ source: this.opts.source }));
    else if (point === 'stopped') {
      this.opts.logger.error({ source: this.opts.source }, 'Unable to record event (will not retry!)');
    }
  }

  private handlerFailed(watcher: string, err: unknown): void {
    this.metrics.handlerErrors.inc({ source: this.opts.source, watcher });
    this.opts.logger.error({ err, source: this.opts.source, watcher }, 'event watcher handler failed');
  }
}
