import type { Counter, Registry } from 'prom-client';
import type { Clock, TimerHandle } from '../../core/clock.ts';
import { SinkError } from '../../core/errors.ts';
import type { Logger } from '../../core/logger.ts';
import { counter, zeroed } from '../../core/metrics.ts';
import {
  type EventsV1Event,
  type EventsV1Sink,
  FINISH_TIME_MS,
  REFRESH_TIME_MS,
  SeriesCache,
  type SeriesWrite,
  seriesPatch,
} from './events.ts';

export interface EventsV1RecorderOptions {
  /** Metric label. */
  readonly source: string;
  readonly sink: EventsV1Sink;
  readonly clock: Clock;
  readonly registry: Registry;
  readonly logger: Logger;
  /** Uniform in [0, 1), for the 10–12.5 s retry jitter. */
  readonly random?: () => number;
  /**
   * Also write a still-running series on each 6-minute pass when it has grown. Upstream writes a running
   * series only on the 30-minute refresh; this trades a few writes for a fresher count on the server.
   */
  readonly heartbeatActiveSeries?: boolean;
  readonly maxTries?: number;
  readonly sleepMs?: number;
}

interface Attempt {
  readonly event: EventsV1Event | undefined;
  readonly retry: boolean;
}

/** The sink side of tools/events: series bookkeeping plus writes, retries and the two periodic passes. */
export class EventsV1Recorder {
  readonly cache = new SeriesCache();
  private readonly opts: EventsV1RecorderOptions;
  private readonly written: Counter<'source' | 'verb'>;
  private readonly retries: Counter<'source'>;
  private readonly givenUp: Counter<'source' | 'reason'>;
  private timers: TimerHandle[] = [];
  private stopped = false;

  constructor(opts: EventsV1RecorderOptions) {
    this.opts = opts;
    const { registry } = opts;
    this.written = counter(registry, {
      name: 'npd_events_v1_written_total',
      help: 'Successful events.k8s.io/v1 writes, by HTTP verb',
      labelNames: ['source', 'verb'],
    });
    this.retries = counter(registry, {
      name: 'npd_events_v1_retries_total',
      help: 'events.k8s.io/v1 write attempts after the first one',
      labelNames: ['source'],
    });
    this.givenUp = counter(registry, {
      name: 'npd_events_v1_given_up_total',
      help: 'events.k8s.io/v1 writes abandoned',
      labelNames: ['source', 'reason'],
    });
    const source = opts.source;
    zeroed(this.written, { source, verb: 'create' }, { source, verb: 'patch' });
    zeroed(this.retries, { source });
    zeroed(
      this.givenUp,
      ...['retries_exhausted', 'rejected', 'shutdown'].map((reason) => ({ source, reason })),
    );
  }

  /** Handles one occurrence; resolves once any write it caused has finished or been abandoned. */
  async record(event: EventsV1Event): Promise<void> {
    const write = this.cache.observe(event, this.opts.clock.now());
    if (write) await this.attemptRecording(write.event);
  }

  /** Starts the 6-minute finish pass and the 30-minute refresh pass. */
  start(): void {
    this.every(FINISH_TIME_MS, () => this.finishPass());
    this.every(REFRESH_TIME_MS, () => this.refreshPass());
  }

  stop(): void {
    this.stopped = true;
    for (const t of this.timers) t.cancel();
    this.timers = [];
  }

  /** Each pass write is tried once; a write that asks for a retry waits for the next pass. */
  async finishPass(): Promise<void> {
    const now = this.opts.clock.now();
    await this.runPass(this.cache.finishPass(now, this.opts.heartbeatActiveSeries ?? false));
  }

  async refreshPass(): Promise<void> {
    await this.runPass(this.cache.refreshPass());
  }

  private async runPass(writes: readonly SeriesWrite[]): Promise<void> {
    for (const write of writes) {
      const { event, retry } = await this.recordEvent(write.event);
      if (!retry) this.cache.written(write, event);
    }
  }

  /** wait.Until with sliding period: the next run is scheduled after the previous one has finished. */
  private every(periodMs: number, fn: () => Promise<void>): void {
    const slot = this.timers.length;
    const schedule = (): void => {
      this.timers[slot] = this.opts.clock.setTimeout(() => {
        void fn().finally(() => {
          if (!this.stopped) schedule();
        });
      }, periodMs);
    };
    schedule();
  }

  private async attemptRecording(event: EventsV1Event): Promise<void> {
    const maxTries = this.opts.maxTries ?? 12;
    for (let tries = 1; ; tries++) {
      if (!(await this.recordEvent(event)).retry) return;
      if (tries >= maxTries || this.stopped) {
        this.givenUp.inc({
          source: this.opts.source,
          reason: this.stopped ? 'shutdown' : 'retries_exhausted',
        });
        this.opts.logger.error({ event: event.name }, 'Unable to write event (retry limit exceeded!)');
        return;
      }
      this.retries.inc({ source: this.opts.source });
      // wait.Jitter(10s, 0.25): 10 to 12.5 seconds.
      const sleep = (this.opts.sleepMs ?? 10_000) * (1 + 0.25 * (this.opts.random ?? Math.random)());
      await new Promise<void>((resolve) => this.opts.clock.setTimeout(resolve, sleep));
    }
  }

  /** One attempt: PATCH the series if there is one, POST otherwise or when the PATCH finds nothing. */
  private async recordEvent(event: EventsV1Event): Promise<Attempt> {
    const { sink, source } = this.opts;
    const patch = seriesPatch(event);
    try {
      if (patch) {
        try {
          const patched = await sink.patch(event.name, event.namespace, patch);
          this.written.inc({ source, verb: 'patch' });
          return { event: patched, retry: false };
        } catch (err) {
          if (!(err instanceof SinkError && err.statusCode === 404)) throw err;
        }
      }
      const { resourceVersion: _stale, ...fresh } = event;
      const created = await sink.create(fresh);
      this.written.inc({ source, verb: 'create' });
      return { event: created, retry: false };
    } catch (err) {
      return { event: undefined, retry: this.classify(err, patch !== undefined, event) };
    }
  }

  /** As core/v1, except that AlreadyExists on a series create means the first create just landed: retry. */
  private classify(err: unknown, isSeries: boolean, event: EventsV1Event): boolean {
    if (!(err instanceof SinkError) || err.statusCode === undefined) {
      this.opts.logger.warn({ err, event: event.name }, 'Unable to write event (may retry after sleeping)');
      return true;
    }
    if (err.reason === 'AlreadyExists' && isSeries) return true;
    this.givenUp.inc({ source: this.opts.source, reason: 'rejected' });
    this.opts.logger.error({ err, event: event.name }, 'Server rejected event (will not retry!)');
    return false;
  }
}
