import type { Counter, Registry } from 'prom-client';
import { counter, zeroed } from '../core/metrics.ts';
import type { ProblemEvent } from '../core/types.ts';
import { evidenceAnnotations } from './evidence.ts';
import { type RecorderMetrics, recorderMetrics } from './record/metrics.ts';

/** The recorders, available once the Node's UID is known (events without it are invisible to kubectl). */
export interface RecorderSource {
  recorderFor(source: string): {
    event(
      type: 'Normal' | 'Warning',
      reason: string,
      message: string,
      annotations?: Readonly<Record<string, string>>,
    ): unknown;
  };
}

export interface AttachOptions {
  /** Per source, the newest event timestamp a previous run already recorded. */
  readonly watermarks?: Readonly<Record<string, number>>;
  /** Log timestamps before this are replays of history (lookback); only they can be duplicates. */
  readonly startedAt?: number;
  readonly onRecorded?: (source: string, timestamp: number) => void;
}

const MAX_PENDING = 1000;
/** Boot time is re-estimated from /proc/uptime on every start, so kmsg timestamps move a little. */
const REPLAY_TOLERANCE_MS = 1000;

/**
 * Turns monitor events into Kubernetes events. Until the Node UID has been fetched, events wait in a
 * bounded queue instead of being posted with an empty involvedObject.uid; overflow is counted. Events
 * that a lookback replay re-detects after a restart are not posted twice.
 */
export class EventDispatcher {
  private recorders: RecorderSource | undefined;
  private options: AttachOptions = {};
  private readonly pending: { source: string; event: ProblemEvent }[] = [];
  private readonly metrics: RecorderMetrics;
  private readonly suppressed: Counter<'source'>;
  private readonly futureMarks: Counter<'source'>;
  private readonly declared = new Set<string>();

  constructor(registry: Registry) {
    this.metrics = recorderMetrics(registry);
    this.suppressed = counter(registry, {
      name: 'npd_events_replay_suppressed_total',
      help: 'Events re-detected by a lookback replay after a restart and not posted again.',
      labelNames: ['source'],
    });
    this.futureMarks = counter(registry, {
      name: 'npd_events_watermarks_ignored_total',
      help: "Event watermarks read from the Node that lie after this agent's start (a clock that ran ahead, a forged annotation), ignored: that source's replays may be posted again.",
      labelNames: ['source'],
    });
  }

  /** Called once the recorders exist; queued events are recorded in order. */
  attach(recorders: RecorderSource, options: AttachOptions = {}): void {
    this.recorders = recorders;
    this.options = options;
    const { watermarks, startedAt } = options;
    for (const [source, mark] of Object.entries(watermarks ?? {}))
      if (startedAt !== undefined && mark > startedAt) this.futureMarks.inc({ source });
    for (const source of this.declared) recorders.recorderFor(source);
    for (const { source, event } of this.pending.splice(0)) this.record(source, event);
  }

  /**
   * The monitors' sources, known before any event: their recorders (and every series those count) are
   * created now, so the first drop or write of each is an increase from 0 that alerts can see.
   */
  declare(sources: readonly string[]): void {
    for (const source of sources) {
      if (this.declared.has(source)) continue;
      this.declared.add(source);
      zeroed(this.suppressed, { source });
      zeroed(this.futureMarks, { source });
      zeroed(this.metrics.dropped, { point: 'awaiting_node_uid', source, watcher: '' });
      this.recorders?.recorderFor(source);
    }
  }

  dispatch(source: string, events: readonly ProblemEvent[]): void {
    for (const event of events) {
      if (this.recorders) this.record(source, event);
      else if (this.pending.length < MAX_PENDING) this.pending.push({ source, event });
      else this.metrics.dropped.inc({ point: 'awaiting_node_uid', source, watcher: '' });
    }
  }

  private record(source: string, event: ProblemEvent): void {
    if (this.isReplay(source, event)) {
      this.suppressed.inc({ source });
      return;
    }
    const type = event.severity === 'warn' ? 'Warning' : 'Normal';
    const annotations = evidenceAnnotations(event.evidence);
    this.recorders?.recorderFor(source).event(type, event.reason, event.message, annotations);
    this.options.onRecorded?.(source, event.timestamp);
  }

  private isReplay(source: string, event: ProblemEvent): boolean {
    const { watermarks, startedAt } = this.options;
    const mark = watermarks?.[source];
    if (mark === undefined || startedAt === undefined || event.timestamp >= startedAt) return false;
    // No earlier run recorded an event after this one started: such a mark (a clock that ran ahead, a
    // forged annotation) is ignored, or it would hide every replay, a crash report among them.
    if (mark > startedAt) return false;
    return event.timestamp <= mark + REPLAY_TOLERANCE_MS;
  }
}
