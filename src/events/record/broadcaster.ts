import type { Registry } from 'prom-client';
import type { Logger } from '../../core/logger.ts';
import { type DropPoint, type RecorderMetrics, recorderMetrics } from './metrics.ts';
import { QueueWatcher, type Watcher, type WatchHandler } from './watcher.ts';

export type { Watcher, WatchHandler } from './watcher.ts';

/**
 * What distribution does when a watcher's queue is full: 'drop' is DropIfChannelFull (the event is lost for
 * that watcher only), 'wait' is WaitIfChannelFull (distribution stalls until the watcher makes room, which
 * backs up the incoming queue and so makes action() wait).
 */
export type FullChannelBehavior = 'drop' | 'wait';

/** tools/record builds its broadcaster with NewLongQueueBroadcaster(1000, DropIfChannelFull). */
export const DEFAULT_QUEUE_LENGTH = 1000;

export interface BroadcasterOptions {
  readonly registry: Registry;
  readonly logger: Logger;
  /** The event source this broadcaster serves, used as a metric label. */
  readonly source: string;
  readonly mode?: FullChannelBehavior;
  readonly incomingLength?: number;
  readonly watcherQueueLength?: number;
}

interface Entry<T> {
  readonly seq: number;
  readonly event: T;
}

interface WaitingProducer<T> {
  readonly event: T;
  readonly admitted: () => void;
}

/**
 * apimachinery's watch.Broadcaster: producers put events into one bounded incoming queue, and a single
 * asynchronous loop hands each event, in order, to every watcher's bounded queue.
 */
export class Broadcaster<T> {
  readonly mode: FullChannelBehavior;
  private readonly opts: BroadcasterOptions;
  private readonly metrics: RecorderMetrics;
  private readonly incomingLength: number;
  private readonly watcherQueueLength: number;
  private readonly incoming: Entry<T>[] = [];
  private readonly producers: WaitingProducer<T>[] = [];
  private readonly watchers = new Set<QueueWatcher<T>>();
  private nextSeq = 0;
  private pumping = false;
  private stoppedFlag = false;
  private shutdownSignal: PromiseWithResolvers<void> | undefined;

  constructor(opts: BroadcasterOptions) {
    this.opts = opts;
    this.mode = opts.mode ?? 'drop';
    this.metrics = recorderMetrics(opts.registry);
    this.incomingLength = opts.incomingLength ?? DEFAULT_QUEUE_LENGTH;
    this.watcherQueueLength = opts.watcherQueueLength ?? DEFAULT_QUEUE_LENGTH;
  }

  /** True once shutdown() has been called: no more actions or watches are accepted. */
  get stopped(): boolean {
    return this.stoppedFlag;
  }

  /** Events waiting for distribution (including blocked action() callers). */
  queued(): number {
    return this.incoming.length + this.producers.length;
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

  /** Resolves once the event is in the incoming queue, waiting for room if needed (Go's blocking Action). */
  action(event: T): Promise<void> {
    if (this.stoppedFlag) {
      this.drop('stopped');
      return Promise.reject(new Error('broadcaster already stopped'));
    }
    if (this.producers.length === 0 && this.incoming.length < this.incomingLength) {
      this.enqueue(event);
      return Promise.resolve();
    }
    return new Promise((admitted) => this.producers.push({ event, admitted }));
  }

  /**
   * Rejects new actions and watches, distributes everything already queued (including blocked action()
   * callers, which Go lets finish), then closes every watcher. Resolves when distribution is over; each
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
    queueMicrotask(() => void this.pump());
  }

  private async pump(): Promise<void> {
    for (;;) {
      const entry = this.incoming.shift();
      if (!entry) break;
      this.admitProducer();
      const pending = this.distribute(entry);
      if (pending) await pending;
    }
    this.pumping = false;
    if (this.stoppedFlag) this.closeAll();
  }

  private admitProducer(): void {
    const producer = this.producers.shift();
    if (!producer) return;
    this.incoming.push({ seq: this.nextSeq++, event: producer.event });
    producer.admitted();
  }

  /** Synchronous unless a watcher in 'wait' mode is full; then returns the wait. */
  private distribute(entry: Entry<T>): Promise<void> | undefined {
    const targets = [...this.watchers].filter((w) => entry.seq >= w.joinedAt);
    for (let i = 0; i < targets.length; i++) {
      const watcher = targets[i] as QueueWatcher<T>;
      if (watcher.offer(entry.event)) continue;
      if (this.mode === 'drop') {
        this.drop('watcher', watcher.name);
        continue;
      }
      return this.distributeWaiting(entry.event, targets.slice(i));
    }
    return undefined;
  }

  private async distributeWaiting(event: T, targets: readonly QueueWatcher<T>[]): Promise<void> {
    for (const watcher of targets) {
      while (!watcher.offer(event)) await watcher.waitForRoom();
    }
  }

  private closeAll(): void {
    for (const watcher of [...this.watchers]) watcher.close();
    this.shutdownSignal?.resolve();
  }

  private drop(point: DropPoint, watcher = ''): void {
    this.metrics.dropped.inc({ point, source: this.opts.source, watcher });
    if (point === 'incoming') {
      this.opts.logger.warn(
        { source: this.opts.source },
        'Unable to record event: too many queued events, dropped event',
      );
    } else if (point === 'stopped') {
      this.opts.logger.error({ source: this.opts.source }, 'Unable to record event (will not retry!)');
    }
  }

  private handlerFailed(watcher: string, err: unknown): void {
    this.metrics.handlerErrors.inc({ source: this.opts.source, watcher });
    this.opts.logger.error({ err, source: this.opts.source, watcher }, 'event watcher handler failed');
  }
}
