import type { JsonObject } from '../../kube/client.ts';
import { formatRfc3339Seconds, parseKubeTime } from '../../kube/time.ts';
import type { EventPatch, EventSink, EventType, KubeEvent, ObjectRef } from './types.ts';

/** The two calls the sink needs; KubeClient provides them, tests may fake them. */
export interface CoreEventsApi {
  createEvent(namespace: string, event: JsonObject): Promise<JsonObject>;
  patchEvent(namespace: string, name: string, body: JsonObject): Promise<JsonObject>;
}

/** Go's `omitempty`: empty strings are left out, so the bytes match what client-go sends. */
function compact(fields: Record<string, string | undefined>): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [k, v] of Object.entries(fields)) if (v !== undefined && v !== '') out[k] = v;
  return out;
}

function refJson(ref: ObjectRef): Record<string, string> {
  return compact({
    kind: ref.kind,
    namespace: ref.namespace,
    name: ref.name,
    uid: ref.uid,
    apiVersion: ref.apiVersion,
    fieldPath: ref.fieldPath,
  });
}

/**
 * The core/v1 Event body, shaped like client-go's: second-precision timestamps, no eventTime (which would
 * switch the server to the strict validation branch), and the message sent verbatim (no printf pass, so
 * a `%` stays a `%`).
 */
export function eventJson(ev: KubeEvent): JsonObject {
  return {
    apiVersion: 'v1',
    kind: 'Event',
    metadata: {
      ...compact({ name: ev.name, namespace: ev.namespace, resourceVersion: ev.resourceVersion }),
      ...(ev.annotations === undefined ? {} : { annotations: { ...ev.annotations } }),
    },
    involvedObject: refJson(ev.involvedObject),
    reason: ev.reason,
    message: ev.message,
    source: compact({ component: ev.source.component, host: ev.source.host }),
    firstTimestamp: formatRfc3339Seconds(ev.firstTimestamp),
    lastTimestamp: formatRfc3339Seconds(ev.lastTimestamp),
    count: ev.count,
    type: ev.type,
    reportingComponent: ev.reportingComponent,
    reportingInstance: ev.reportingInstance,
  };
}

/**
 * client-go's dedupe patch: the two-way merge of {count, lastTimestamp, message} against zero values, so
 * an empty message is omitted and the keys come out in this order.
 */
export function eventPatchJson(patch: EventPatch): JsonObject {
  const body: JsonObject = { count: patch.count, lastTimestamp: formatRfc3339Seconds(patch.lastTimestamp) };
  if (patch.message !== '') body.message = patch.message;
  return body;
}

function obj(value: unknown): JsonObject {
  return value !== null && typeof value === 'object' && !Array.isArray(value) ? (value as JsonObject) : {};
}

function text(value: unknown, fallback: string): string {
  return typeof value === 'string' ? value : fallback;
}

function refFrom(value: unknown, fallback: ObjectRef): ObjectRef {
  const r = obj(value);
  const fieldPath = typeof r.fieldPath === 'string' ? r.fieldPath : fallback.fieldPath;
  return {
    apiVersion: text(r.apiVersion, fallback.apiVersion),
    kind: text(r.kind, fallback.kind),
    name: text(r.name, fallback.name),
    namespace: text(r.namespace, fallback.namespace),
    uid: text(r.uid, fallback.uid),
    ...(fieldPath === undefined ? {} : { fieldPath }),
  };
}

/**
 * Reads the server's copy back into a KubeEvent. The server is authoritative for name, resourceVersion,
 * count and timestamps; fields it leaves out fall back to what was sent.
 */
export function eventFromJson(json: JsonObject, sent: KubeEvent): KubeEvent {
  const md = obj(json.metadata);
  const source = obj(json.source);
  const type = json.type === 'Normal' || json.type === 'Warning' ? (json.type as EventType) : sent.type;
  const resourceVersion = typeof md.resourceVersion === 'string' ? md.resourceVersion : sent.resourceVersion;
  return {
    name: text(md.name, sent.name),
    namespace: text(md.namespace, sent.namespace),
    ...(resourceVersion === undefined ? {} : { resourceVersion }),
    ...(sent.annotations === undefined ? {} : { annotations: sent.annotations }),
    involvedObject: refFrom(json.involvedObject, sent.involvedObject),
    reason: text(json.reason, sent.reason),
    message: text(json.message, sent.message),
    type,
    source: {
      component: text(source.component, sent.source.component),
      host: text(source.host, sent.source.host),
    },
    reportingComponent: text(json.reportingComponent, sent.reportingComponent),
    reportingInstance: text(json.reportingInstance, sent.reportingInstance),
    firstTimestamp: parseKubeTime(json.firstTimestamp) ?? sent.firstTimestamp,
    lastTimestamp: parseKubeTime(json.lastTimestamp) ?? sent.lastTimestamp,
    count: typeof json.count === 'number' ? json.count : sent.count,
  };
}

/** client-go's makeEvent defaults an empty namespace to "default"; a URL cannot carry an empty one. */
function namespaceOf(event: KubeEvent): string {
  return event.namespace === '' ? 'default' : event.namespace;
}

/** EventSink for core/v1 Events: POST for new events, strategic-merge PATCH for repeats. */
export class KubeEventSink implements EventSink {
  private readonly api: CoreEventsApi;

  constructor(api: CoreEventsApi) {
    this.api = api;
  }

  async create(event: KubeEvent): Promise<KubeEvent> {
    const json = await this.api.createEvent(namespaceOf(event), eventJson(event));
    return eventFromJson(json, event);
  }

  async patch(event: KubeEvent, patch: EventPatch): Promise<KubeEvent> {
    const json = await this.api.patchEvent(namespaceOf(event), event.name, eventPatchJson(patch));
    const sent = { ...event, count: patch.count, lastTimestamp: patch.lastTimestamp, message: patch.message };
    return eventFromJson(json, sent);
  }
}
