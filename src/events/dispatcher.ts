import type { Registry } from 'prom-client';
import { type RecorderMetrics, recorderMetrics } from '../recorder/metrics.ts';
import type { EventRecorder } from '../recorder/recorder.ts';
import type { ProblemEvent } from '../types.ts';

/** The recorders, available once the Node's UID is known (events without it are invisible to kubectl). */
export interface RecorderSource {
  recorderFor(source: string): EventRecorder;
}

const MAX_PENDING = 1000;

/**
 * Turns monitor events into Kubernetes events. Until the Node UID has been fetched, events wait in a
 * bounded queue instead of being posted with an empty involvedObject.uid; overflow is counted.
 */
export class EventDispatcher {
  private recorders: RecorderSource | undefined;
  private readonly pending: { source: string; event: ProblemEvent }[] = [];
  private readonly metrics: RecorderMetrics;

  constructor(registry: Registry) {
    this.metrics = recorderMetrics(registry);
  }

  /** Called once the recorders exist; queued events are recorded in order. */
  attach(recorders: RecorderSource): void {
    this.recorders = recorders;
    for (const { source, event } of this.pending.splice(0)) this.record(source, event);
  }

  dispatch(source: string, events: readonly ProblemEvent[]): void {
    for (const event of events) {
      if (this.recorders) this.record(source, event);
      else if (this.pending.length < MAX_PENDING) this.pending.push({ source, event });
      else this.metrics.dropped.inc({ point: 'awaiting_node_uid', source, watcher: '' });
    }
  }

  private record(source: string, event: ProblemEvent): void {
    const type = event.severity === 'warn' ? 'Warning' : 'Normal';
    this.recorders?.recorderFor(source).event(type, event.reason, event.message);
  }
}
