import { type JsonObject, type KubeClient, STRATEGIC_MERGE_PATCH } from '../../kube/client.ts';

/**
 * The fields of an events.k8s.io/v1 Event this sink relies on. The recorder owns the full shape
 * (including eventTime as a 6-digit MicroTime string, which the server insists on); the sink only needs
 * to find the namespace.
 */
export interface EventsV1Object extends Record<string, unknown> {
  readonly metadata?: { readonly name?: string; readonly namespace?: string } & Record<string, unknown>;
}

const seg = encodeURIComponent;
const RESOURCE = 'events.events.k8s.io';

function namespaceOf(ev: Record<string, unknown>): string {
  const md = ev.metadata;
  const ns =
    md !== null && typeof md === 'object' ? (md as EventsV1Object['metadata'])?.namespace : undefined;
  return typeof ns === 'string' && ns !== '' ? ns : 'default';
}

/**
 * Writes events.k8s.io/v1 Events: POST for a new event and a strategic-merge PATCH for series updates.
 * Bodies go out unchanged and the server's JSON comes back unchanged; errors are the client's ApiError.
 */
export class KubeEventsV1Sink {
  private readonly client: Pick<KubeClient, 'request'>;

  constructor(client: Pick<KubeClient, 'request'>) {
    this.client = client;
  }

  create(ev: Record<string, unknown>): Promise<Record<string, unknown>> {
    const body: JsonObject = { apiVersion: 'events.k8s.io/v1', kind: 'Event', ...ev };
    const path = `/apis/events.k8s.io/v1/namespaces/${seg(namespaceOf(ev))}/events`;
    return this.client.request({ method: 'POST', path, resource: RESOURCE, body });
  }

  patch(namespace: string, name: string, body: Record<string, unknown>): Promise<Record<string, unknown>> {
    const ns = namespace === '' ? 'default' : namespace;
    const path = `/apis/events.k8s.io/v1/namespaces/${seg(ns)}/events/${seg(name)}`;
    return this.client.request({
      method: 'PATCH',
      path,
      resource: RESOURCE,
      body,
      contentType: STRATEGIC_MERGE_PATCH,
    });
  }
}
