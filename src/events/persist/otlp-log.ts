import type { KubeEvent } from '../record/types.ts';

/** An OTLP attribute value: a string, or an integer (int64 on the wire). */
export type AttrValue = string | number;
export type Attributes = readonly (readonly [string, AttrValue])[];

/** SeverityNumber values of the OTLP logs data model. */
export const SEVERITY = { INFO: 9, WARN: 13 } as const;

/** One log record with its resource and scope: what one OTLP request carries. */
export interface OtlpLog {
  readonly resource: Attributes;
  readonly scope: { readonly name: string; readonly version: string };
  readonly timeUnixNano: bigint;
  readonly observedTimeUnixNano: bigint;
  readonly severityNumber: number;
  readonly severityText: string;
  readonly body: string;
  readonly attributes: Attributes;
}

/** What the agent knows about itself and its node, for the resource of every record. */
export interface OtlpSource {
  readonly nodeName: string;
  readonly serviceName: string;
  readonly serviceVersion: string;
  /** Extra resource attributes (OTEL_RESOURCE_ATTRIBUTES); the agent's own keys win. */
  readonly extraResource?: Attributes;
}

const nanos = (ms: number): bigint => BigInt(Math.round(ms * 1000)) * 1000n;

function present(entries: readonly (readonly [string, AttrValue | undefined])[]): Attributes {
  return entries.filter((e): e is readonly [string, AttrValue] => e[1] !== undefined && e[1] !== '');
}

/**
 * The resource follows the OpenTelemetry Kubernetes semantic conventions (k8s.node.*) and the
 * Collector's k8seventsreceiver, which puts the involved object under k8s.object.*, so queries and
 * dashboards written for events that receiver collects also match the agent's records.
 */
function resourceOf(event: KubeEvent, src: OtlpSource): Attributes {
  const obj = event.involvedObject;
  const own = present([
    ['service.name', src.serviceName],
    ['service.version', src.serviceVersion],
    ['k8s.node.name', src.nodeName],
    ['k8s.node.uid', obj.kind === 'Node' ? obj.uid : undefined],
    ['k8s.object.kind', obj.kind],
    ['k8s.object.name', obj.name],
    ['k8s.object.uid', obj.uid],
    ['k8s.object.api_version', obj.apiVersion],
  ]);
  const keys = new Set(own.map(([k]) => k));
  return [...(src.extraResource ?? []).filter(([k]) => !keys.has(k)), ...own];
}

/**
 * The event fields, named as the k8s.event semantic conventions and the k8seventsreceiver name them; its
 * annotations (the evidence, events/evidence.ts) as `k8s.event.annotation.<key>`, the pattern of the
 * conventions' `k8s.pod.annotation.<key>`.
 */
function attributesOf(event: KubeEvent): Attributes {
  const annotations = Object.entries(event.annotations ?? {});
  return present([
    ['k8s.event.reason', event.reason],
    ['k8s.event.name', event.name],
    ['k8s.event.count', event.count],
    ['k8s.event.start_time', new Date(event.firstTimestamp).toISOString()],
    ['k8s.event.type', event.type],
    ['k8s.event.source.component', event.source.component],
    ['k8s.event.reporting_component', event.reportingComponent],
    ['k8s.namespace.name', event.namespace],
    ...annotations.map(([k, v]) => [`k8s.event.annotation.${k}`, v] as const),
  ]);
}

/** One persisted event as an OTLP log record; severity from the event type (Warning: WARN, else INFO). */
export function otlpLog(event: KubeEvent, src: OtlpSource, observedMs: number): OtlpLog {
  const warn = event.type === 'Warning';
  return {
    resource: resourceOf(event, src),
    scope: { name: src.serviceName, version: src.serviceVersion },
    timeUnixNano: nanos(event.firstTimestamp),
    observedTimeUnixNano: nanos(observedMs),
    severityNumber: warn ? SEVERITY.WARN : SEVERITY.INFO,
    severityText: warn ? 'WARN' : 'INFO',
    body: event.message,
    attributes: attributesOf(event),
  };
}
