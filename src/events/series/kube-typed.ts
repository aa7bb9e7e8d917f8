import { formatMicroTime, parseKubeTime } from '../../kube/time.ts';
import type {
  EventSeries,
  EventsV1Event,
  EventsV1SeriesPatch,
  EventsV1Sink,
  V1ObjectReference,
} from './events.ts';
import type { KubeEventsV1Sink } from './kube-sink.ts';

type Json = Record<string, unknown>;

const EMPTY_REF: V1ObjectReference = { apiVersion: '', kind: '', name: '', namespace: '', uid: '' };

function obj(value: unknown): Json {
  return value !== null && typeof value === 'object' && !Array.isArray(value) ? (value as Json) : {};
}

/** Go's omitempty for the reference fields, in ObjectReference's field order. */
function refJson(ref: V1ObjectReference): Record<string, string> {
  const out: Record<string, string> = {};
  const fields = [
    ['kind', ref.kind],
    ['namespace', ref.namespace],
    ['name', ref.name],
    ['uid', ref.uid],
    ['apiVersion', ref.apiVersion],
    ['resourceVersion', ref.resourceVersion],
    ['fieldPath', ref.fieldPath],
  ] as const;
  for (const [k, v] of fields) if (v !== undefined && v !== '') out[k] = v;
  return out;
}

function seriesJson(series: EventSeries | EventsV1SeriesPatch['series']): Json {
  return { count: series.count, lastObservedTime: formatMicroTime(series.lastObservedTime) };
}

/** The events.k8s.io/v1 wire body; the deprecated* fields stay unset, as strict validation requires. */
export function eventsV1Json(ev: EventsV1Event): Json {
  const metadata: Json = { name: ev.name, namespace: ev.namespace };
  if (ev.resourceVersion) metadata.resourceVersion = ev.resourceVersion;
  if (ev.annotations) metadata.annotations = { ...ev.annotations };
  const body: Json = {
    metadata,
    eventTime: formatMicroTime(ev.eventTime),
    reportingController: ev.reportingController,
    reportingInstance: ev.reportingInstance,
    action: ev.action,
    reason: ev.reason,
    regarding: refJson(ev.regarding),
    note: ev.note,
    type: ev.type,
  };
  if (ev.series) body.series = seriesJson(ev.series);
  if (ev.related) body.related = refJson(ev.related);
  return body;
}

function seriesFrom(value: unknown, sent: EventSeries | undefined): EventSeries | undefined {
  const s = obj(value);
  const lastObservedTime = parseKubeTime(s.lastObservedTime);
  if (typeof s.count !== 'number' || lastObservedTime === undefined) return sent;
  return { count: s.count, lastObservedTime };
}

function text(value: unknown, fallback: string): string {
  return typeof value === 'string' ? value : fallback;
}

function refFrom(value: unknown, fallback: V1ObjectReference): V1ObjectReference {
  const r = obj(value);
  const out: { -readonly [K in keyof V1ObjectReference]: V1ObjectReference[K] } = {
    kind: text(r.kind, fallback.kind),
    namespace: text(r.namespace, fallback.namespace),
    name: text(r.name, fallback.name),
    uid: text(r.uid, fallback.uid),
    apiVersion: text(r.apiVersion, fallback.apiVersion),
  };
  const rv = typeof r.resourceVersion === 'string' ? r.resourceVersion : fallback.resourceVersion;
  if (rv !== undefined) out.resourceVersion = rv;
  const fp = typeof r.fieldPath === 'string' ? r.fieldPath : fallback.fieldPath;
  if (fp !== undefined) out.fieldPath = fp;
  return out;
}

/** Reads the server's copy; fields it leaves out (or garbles) fall back to `sent`. */
export function eventsV1From(json: Json, sent: EventsV1Event): EventsV1Event {
  const md = obj(json.metadata);
  const out: EventsV1Event = {
    ...sent,
    name: text(md.name, sent.name),
    namespace: text(md.namespace, sent.namespace),
    eventTime: parseKubeTime(json.eventTime) ?? sent.eventTime,
    reportingController: text(json.reportingController, sent.reportingController),
    reportingInstance: text(json.reportingInstance, sent.reportingInstance),
    action: text(json.action, sent.action),
    reason: text(json.reason, sent.reason),
    regarding: refFrom(json.regarding, sent.regarding),
    note: text(json.note, sent.note),
    type: json.type === 'Normal' || json.type === 'Warning' ? json.type : sent.type,
  };
  if (typeof md.resourceVersion === 'string') out.resourceVersion = md.resourceVersion;
  const series = seriesFrom(json.series, sent.series);
  if (series) out.series = series;
  if (json.related !== undefined) out.related = refFrom(json.related, sent.related ?? EMPTY_REF);
  return out;
}

/** What a PATCH knows before the answer: name, namespace and the series it wrote. */
function patchSkeleton(name: string, namespace: string, patch: EventsV1SeriesPatch): EventsV1Event {
  return {
    name,
    namespace,
    eventTime: patch.series.lastObservedTime,
    series: { count: patch.series.count, lastObservedTime: patch.series.lastObservedTime },
    reportingController: '',
    reportingInstance: '',
    action: '',
    reason: '',
    regarding: EMPTY_REF,
    note: '',
    type: 'Normal',
  };
}

/**
 * The recorder's typed EventsV1Sink on top of the raw KubeEventsV1Sink: epoch-ms times become 6-digit
 * MicroTime strings on the way out and are parsed back from the server's answer.
 */
export class TypedEventsV1Sink implements EventsV1Sink {
  private readonly raw: Pick<KubeEventsV1Sink, 'create' | 'patch'>;

  constructor(raw: Pick<KubeEventsV1Sink, 'create' | 'patch'>) {
    this.raw = raw;
  }

  async create(event: EventsV1Event): Promise<EventsV1Event> {
    return eventsV1From(await this.raw.create(eventsV1Json(event)), event);
  }

  async patch(name: string, namespace: string, patch: EventsV1SeriesPatch): Promise<EventsV1Event> {
    const json = await this.raw.patch(namespace, name, { series: seriesJson(patch.series) });
    return eventsV1From(json, patchSkeleton(name, namespace, patch));
  }
}
