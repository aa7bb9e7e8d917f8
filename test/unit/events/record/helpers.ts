import pino from 'pino';
import type { Registry } from 'prom-client';
import type { Logger } from '../../../../src/core/logger.ts';
import type { EventPatch, EventSink, KubeEvent, ObjectRef } from '../../../../src/events/record/types.ts';

/** Lets queued microtasks and immediates run; advances no clock and sleeps for no real time. */
export async function drain(rounds = 20): Promise<void> {
  for (let i = 0; i < rounds; i++) await new Promise<void>((resolve) => setImmediate(resolve));
}

/** Sum of a metric's samples whose labels include `labels`. */
export async function metricValue(
  registry: Registry,
  name: string,
  labels: Record<string, string> = {},
): Promise<number> {
  const metric = registry.getSingleMetric(name);
  if (!metric) return 0;
  const { values } = await metric.get();
  return values
    .filter((v) => Object.entries(labels).every(([k, want]) => String(v.labels[k]) === want))
    .reduce((sum, v) => sum + v.value, 0);
}

export interface LogRecord {
  readonly level: number;
  readonly msg: string;
  readonly [field: string]: unknown;
}

export function captureLogger(): { logger: Logger; records: LogRecord[] } {
  const records: LogRecord[] = [];
  const logger = pino({ level: 'trace' }, { write: (line: string) => records.push(JSON.parse(line)) });
  return { logger, records };
}

export const NODE: ObjectRef = {
  apiVersion: 'v1',
  kind: 'Node',
  name: 'node-1',
  namespace: '',
  uid: 'uid-1',
};

export function kubeEvent(overrides: Partial<KubeEvent> = {}, at = Date.UTC(2026, 0, 1)): KubeEvent {
  return {
    name: `node-1.${(BigInt(at) * 1_000_000n).toString(16)}`,
    namespace: 'default',
    involvedObject: NODE,
    reason: 'OOMKilling',
    message: 'Killed process 1234 (foo)',
    type: 'Warning',
    source: { component: 'kernel-monitor', host: 'node-1' },
    reportingComponent: 'kernel-monitor',
    reportingInstance: 'node-1',
    firstTimestamp: at,
    lastTimestamp: at,
    count: 1,
    ...overrides,
  };
}

export interface SinkCall {
  readonly verb: 'create' | 'patch';
  readonly event: KubeEvent;
  readonly patch?: EventPatch;
}

type Responder = (call: SinkCall) => KubeEvent | Error | Promise<KubeEvent>;

/** Records every call; answers with `respond`, by default echoing the event with a new resourceVersion. */
export class FakeSink implements EventSink {
  readonly calls: SinkCall[] = [];
  respond: Responder;
  private rv = 0;

  constructor(respond?: Responder) {
    this.respond = respond ?? ((call) => this.echo(call));
  }

  echo(call: SinkCall): KubeEvent {
    return { ...call.event, resourceVersion: String(++this.rv) };
  }

  create(event: KubeEvent): Promise<KubeEvent> {
    return this.answer({ verb: 'create', event: structuredClone(event) });
  }

  patch(event: KubeEvent, patch: EventPatch): Promise<KubeEvent> {
    return this.answer({ verb: 'patch', event: structuredClone(event), patch: { ...patch } });
  }

  verbs(): string {
    return this.calls.map((c) => c.verb).join(',');
  }

  private async answer(call: SinkCall): Promise<KubeEvent> {
    this.calls.push(call);
    const result = await this.respond(call);
    if (result instanceof Error) throw result;
    return result;
  }
}
