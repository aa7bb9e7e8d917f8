import { randomUUID } from 'node:crypto';
import { generateEventName } from '../record/names.ts';
import type { EventType, ObjectRef } from '../record/types.ts';

/**
 * events.k8s.io/v1 with client-go tools/events semantics: repeats of an isomorphic event (same key, note
 * ignored) fold into one object whose `series` counts them. The second occurrence is written at once; later
 * ones only update the local series, which reaches the server when the series finishes (6 minutes without
 * an occurrence, checked every 6 minutes) or on the 30-minute refresh.
 */

export const FINISH_TIME_MS = 6 * 60_000;
export const REFRESH_TIME_MS = 30 * 60_000;

/** An object reference as events/v1 keys it: resourceVersion counts, unlike in core/v1's keys. */
export interface V1ObjectReference extends ObjectRef {
  readonly resourceVersion?: string;
}

export interface EventSeries {
  count: number;
  /** Epoch milliseconds; the sink writes it as a 6-digit MicroTime. */
  lastObservedTime: number;
}

/** The fields tools/events sets; the deprecated* fields stay unset, as strict validation requires. */
export interface EventsV1Event {
  name: string;
  namespace: string;
  resourceVersion?: string;
  /** metadata.annotations: the problem's evidence (events/evidence.ts); not in isomorphicKey. */
  annotations?: Readonly<Record<string, string>>;
  /** Epoch milliseconds; the sink writes it as a 6-digit MicroTime. */
  eventTime: number;
  series?: EventSeries;
  reportingController: string;
  reportingInstance: string;
  action: string;
  reason: string;
  regarding: V1ObjectReference;
  related?: V1ObjectReference;
  note: string;
  type: EventType;
}

/** The strategic-merge patch from (event without series) to (event): only the series. */
export interface EventsV1SeriesPatch {
  readonly series: { readonly count: number; readonly lastObservedTime: number };
}

/** Where events/v1 objects are written. Errors are SinkErrors, classified as for core/v1. */
export interface EventsV1Sink {
  create(event: EventsV1Event): Promise<EventsV1Event>;
  patch(name: string, namespace: string, patch: EventsV1SeriesPatch): Promise<EventsV1Event>;
}

function refFields(ref: V1ObjectReference | undefined): string[] {
  if (!ref) return ['', '', '', '', '', '', ''];
  return [
    ref.kind,
    ref.namespace,
    ref.name,
    ref.uid,
    ref.apiVersion,
    ref.resourceVersion ?? '',
    ref.fieldPath ?? '',
  ];
}

/** tools/events getKey: a struct compared field by field, so fields are JSON-quoted rather than glued. */
export function isomorphicKey(e: EventsV1Event): string {
  return JSON.stringify([
    e.type,
    e.action,
    e.reason,
    e.reportingController,
    e.reportingInstance,
    ...refFields(e.regarding),
    ...refFields(e.related),
  ]);
}

export interface EventsV1Init {
  readonly regarding: V1ObjectReference;
  readonly related?: V1ObjectReference;
  readonly type: EventType;
  readonly reason: string;
  readonly action: string;
  readonly note: string;
  readonly reportingController: string;
  readonly reportingInstance: string;
  /** Used when `regarding` has no namespace; default "default". */
  readonly namespace?: string;
}

/** tools/events' Eventf: eventTime set, no series. */
export function makeEventsV1Event(
  init: EventsV1Init,
  now: number,
  nanos: bigint,
  uuid: () => string = randomUUID,
): EventsV1Event {
  const { namespace, ...fields } = init;
  return {
    ...fields,
    name: generateEventName(init.regarding.name, nanos, uuid),
    namespace: init.regarding.namespace || namespace || 'default',
    eventTime: now,
  };
}

export function seriesPatch(event: EventsV1Event): EventsV1SeriesPatch | undefined {
  const s = event.series;
  return s ? { series: { count: s.count, lastObservedTime: s.lastObservedTime } } : undefined;
}

function clone(event: EventsV1Event): EventsV1Event {
  return { ...event, ...(event.series ? { series: { ...event.series } } : {}) };
}

export type SeriesWriteKind = 'occurrence' | 'finish' | 'refresh' | 'heartbeat';

/** A write the cache asks for; report the result back through SeriesCache.written(). */
export interface SeriesWrite {
  readonly key: string;
  readonly kind: SeriesWriteKind;
  /** A private copy, safe to hand to a sink. */
  readonly event: EventsV1Event;
}

interface SeriesEntry {
  event: EventsV1Event;
  /** The series count of the newest write asked for, so a heartbeat skips series with nothing new. */
  issuedCount: number;
}

/**
 * The series bookkeeping of tools/events' eventBroadcasterImpl, pure and synchronous so the async recorder
 * and the write-count comparison share it. Unbounded, as upstream: only the finish pass empties it.
 */
export class SeriesCache {
  private readonly entries = new Map<string, SeriesEntry>();

  get size(): number {
    return this.entries.size;
  }

  /** Returns the write this occurrence needs now, if any. */
  observe(event: EventsV1Event, now: number): SeriesWrite | undefined {
    const key = isomorphicKey(event);
    const entry = this.entries.get(key);
    if (!entry) {
      this.entries.set(key, { event: clone(event), issuedCount: 1 });
      return { key, kind: 'occurrence', event: clone(event) };
    }
    if (entry.event.series) {
      entry.event.series.count++;
      entry.event.series.lastObservedTime = now;
      return undefined;
    }
    // The series count starts at 2: the singleton already written is the first occurrence.
    entry.event.series = { count: 2, lastObservedTime: now };
    entry.issuedCount = 2;
    return { key, kind: 'occurrence', event: clone(entry.event) };
  }

  /**
   * The 6-minute pass: a series idle for longer than 6 minutes gets its final write; a singleton older than
   * that is forgotten without a call. With `heartbeat`, a series still going is also written when it has
   * grown since its last write (not upstream behaviour; see EventsV1RecorderOptions.heartbeatActiveSeries).
   */
  finishPass(now: number, heartbeat = false): SeriesWrite[] {
    const writes: SeriesWrite[] = [];
    for (const [key, entry] of this.entries) {
      const series = entry.event.series;
      if (!series) {
        if (entry.event.eventTime < now - FINISH_TIME_MS) this.entries.delete(key);
      } else if (series.lastObservedTime < now - FINISH_TIME_MS) {
        writes.push(this.issue(key, entry, 'finish'));
      } else if (heartbeat && series.count > entry.issuedCount) {
        writes.push(this.issue(key, entry, 'heartbeat'));
      }
    }
    return writes;
  }

  /** The 30-minute pass: every series is written again, keeping it alive past the server's event TTL. */
  refreshPass(): SeriesWrite[] {
    const writes: SeriesWrite[] = [];
    for (const [key, entry] of this.entries) {
      if (entry.event.series) writes.push(this.issue(key, entry, 'refresh'));
    }
    return writes;
  }

  /**
   * Reports a pass write that will not be retried. Like client-go master, the entry is only touched if no
   * occurrence arrived while the write was in flight: a finished series is forgotten, a refreshed one takes
   * the server's copy.
   */
  written(write: SeriesWrite, serverEvent: EventsV1Event | undefined): void {
    const entry = this.entries.get(write.key);
    if (!entry || entry.event.series?.count !== write.event.series?.count) return;
    if (write.kind === 'finish') this.entries.delete(write.key);
    else if (write.kind === 'refresh' && serverEvent) entry.event = clone(serverEvent);
  }

  private issue(key: string, entry: SeriesEntry, kind: SeriesWriteKind): SeriesWrite {
    entry.issuedCount = entry.event.series?.count ?? 1;
    return { key, kind, event: clone(entry.event) };
  }
}
