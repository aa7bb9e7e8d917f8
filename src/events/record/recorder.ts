import { randomUUID } from 'node:crypto';
import type { Registry } from 'prom-client';
import type { Clock } from '../../core/clock.ts';
import type { Logger } from '../../core/logger.ts';
import { zeroed } from '../../core/metrics.ts';
import type { Broadcaster } from './broadcaster.ts';
import { type RecorderMetrics, recorderMetrics } from './metrics.ts';
import { generateEventName, type NanoSource } from './names.ts';
import type { EventType, KubeEvent, ObjectRef } from './types.ts';

export interface EventRecorderOptions {
  /** The problem-daemon source, written as source.component and reportingComponent. */
  readonly component: string;
  /** The node name, written as source.host and reportingInstance. */
  readonly host: string;
  readonly involvedObject: ObjectRef;
  /** Used when the involved object has no namespace (a Node); defaults to "default". */
  readonly namespace?: string;
  readonly clock: Clock;
  readonly broadcaster: Broadcaster<KubeEvent>;
  /** Strictly increasing nanoseconds; share one source across recorders naming the same object. */
  readonly nanos: NanoSource;
  readonly logger: Logger;
  readonly registry: Registry;
  readonly uuid?: () => string;
}

function isEventType(value: string): value is EventType {
  return value === 'Normal' || value === 'Warning';
}

/**
 * tools/record's recorder for one source: builds a core/v1 Event and hands it to the broadcaster without
 * ever blocking or throwing. Messages are taken verbatim; there is no format-string step, so `%` survives.
 */
export class EventRecorder {
  readonly component: string;
  private readonly opts: EventRecorderOptions;
  private readonly metrics: RecorderMetrics;

  constructor(opts: EventRecorderOptions) {
    this.opts = opts;
    this.component = opts.component;
    this.metrics = recorderMetrics(opts.registry);
    const source = opts.component;
    zeroed(this.metrics.recorded, { source, type: 'Normal' }, { source, type: 'Warning' });
    zeroed(this.metrics.dropped, { point: 'invalid_type', source, watcher: '' });
  }

  /**
   * Returns whether the event was queued; every refusal is logged and counted. `annotations`: as
   * client-go's AnnotatedEventf, on the Event's metadata (the evidence, events/evidence.ts).
   */
  event(
    type: string,
    reason: string,
    message: string,
    annotations?: Readonly<Record<string, string>>,
  ): boolean {
    if (!isEventType(type)) {
      this.metrics.dropped.inc({ point: 'invalid_type', source: this.component, watcher: '' });
      this.opts.logger.error(
        { source: this.component, type, reason },
        'Unsupported event type, event dropped (type must be Normal or Warning)',
      );
      return false;
    }
    const event = this.makeEvent(type, reason, message);
    if (annotations !== undefined) event.annotations = annotations;
    const queued = this.opts.broadcaster.actionOrDrop(event);
    if (queued) this.metrics.recorded.inc({ source: this.component, type });
    return queued;
  }

  private makeEvent(type: EventType, reason: string, message: string): KubeEvent {
    const { involvedObject, host, clock } = this.opts;
    const now = clock.now();
    return {
      name: generateEventName(involvedObject.name, this.opts.nanos(), this.opts.uuid ?? randomUUID),
      namespace: involvedObject.namespace || this.opts.namespace || 'default',
      involvedObject,
      reason,
      message,
      type,
      source: { component: this.component, host },
      reportingComponent: this.component,
      reportingInstance: host,
      firstTimestamp: now,
      lastTimestamp: now,
      count: 1,
    };
  }
}

/** The reference NPD puts in Node events: cluster-scoped, so no namespace. */
export function nodeRef(name: string, uid: string): ObjectRef {
  return { apiVersion: 'v1', kind: 'Node', name, namespace: '', uid };
}
