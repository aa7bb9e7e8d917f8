/**
 * The core/v1 Event shape the recorder builds and sinks write, limited to the fields client-go's
 * tools/record sets. Timestamps are epoch milliseconds; sinks format them for the wire.
 */
export type EventType = 'Normal' | 'Warning';

export interface ObjectRef {
  readonly apiVersion: string;
  readonly kind: string;
  readonly name: string;
  readonly namespace: string;
  readonly uid: string;
  readonly fieldPath?: string;
}

export interface EventSource {
  readonly component: string;
  readonly host: string;
}

export interface KubeEvent {
  name: string;
  namespace: string;
  resourceVersion?: string;
  /** metadata.annotations, as client-go's AnnotatedEventf sets them: the problem's evidence (events/evidence.ts). */
  annotations?: Readonly<Record<string, string>>;
  involvedObject: ObjectRef;
  reason: string;
  message: string;
  type: EventType;
  source: EventSource;
  reportingComponent: string;
  reportingInstance: string;
  firstTimestamp: number;
  lastTimestamp: number;
  count: number;
}

/** The exact strategic-merge patch client-go sends for a repeated event. */
export interface EventPatch {
  readonly count: number;
  readonly lastTimestamp: number;
  readonly message: string;
}

/** Where correlated events are written: the API server, or a fake in tests. */
export interface EventSink {
  create(event: KubeEvent): Promise<KubeEvent>;
  patch(event: KubeEvent, patch: EventPatch): Promise<KubeEvent>;
}
