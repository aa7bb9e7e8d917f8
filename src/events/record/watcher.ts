/** A watcher handler. The next event is not delivered until the returned promise settles. */
export type WatchHandler<T> = (event: T) => void | Promise<void>;

/** What a broadcaster hands back from watch(). */
export interface Watcher {
  readonly name: string;
  /** Resolves once the watcher has ended: stopped, or closed by shutdown and fully drained. */
  readonly done: Promise<void>;
  /** Events queued for the handler, not counting the one it is handling. */
  pending(): number;
  /** Ends delivery at once and discards the queue. Idempotent; returns how many events were discarded. */
  stop(): number;
}

export interface QueueWatcherOptions<T> {
  readonly name: string;
  /** Sequence number of the first broadcast this watcher may see. */
  readonly joinedAt: number;
  readonly capacity: number;
  readonly handler: WatchHandler<T>;
  readonly onError: (err: unknown) => void;
  readonly onEnded: () => void;
}

/**
 * The JavaScript stand-in for a Go result channel plus the goroutine that ranges over it: a bounded FIFO
 * drained by one async loop, so a slow handler blocks everything behind it (head-of-line blocking, as in
 * client-go's StartEventWatcher).
 */
export class QueueWatcher<T> implements Watcher {
  readonly name: string;
  readonly joinedAt: number;
  readonly done: Promise<void>;
  private readonly opts: QueueWatcherOptions<T>;
  private readonly queue: T[] = [];
  private readonly resolveDone: () => void;
  private running = false;
  private closed = false;
  private ended = false;

  constructor(opts: QueueWatcherOptions<T>) {
    this.opts = opts;
    this.name = opts.name;
    this.joinedAt = opts.joinedAt;
    const { promise, resolve } = Promise.withResolvers<void>();
    this.done = promise;
    this.resolveDone = resolve;
  }

  get isEnded(): boolean {
    return this.ended;
  }

  pending(): number {
    return this.queue.length;
  }

  /** False only when the queue is full; an ended watcher silently swallows the event. */
  offer(event: T): boolean {
    if (this.ended) return true;
    if (this.queue.length >= this.opts.capacity) return false;
    this.queue.push(event);
    this.kick();
    return true;
  }

  /** No more events will be offered; the watcher ends once its queue is drained. */
  close(): void {
    this.closed = true;
    // While not running the queue is empty: offer() always starts the loop.
    if (!this.running) this.end();
  }

  stop(): number {
    if (this.ended) return 0;
    const discarded = this.queue.length;
    this.queue.length = 0;
    this.end();
    return discarded;
  }

  private kick(): void {
    if (this.running) return;
    this.running = true;
    queueMicrotask(() => void this.run());
  }

  private async run(): Promise<void> {
    while (!this.ended && this.queue.length > 0) {
      const event = this.queue.shift() as T;
      try {
        await this.opts.handler(event);
      } catch (err) {
        this.opts.onError(err);
      }
    }
    this.running = false;
    if (this.closed) this.end();
  }

  private end(): void {
    if (this.ended) return;
    this.ended = true;
    this.opts.onEnded();
    this.resolveDone();
  }
}
