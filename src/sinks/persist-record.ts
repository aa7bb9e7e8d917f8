import type { JsonObject } from '../k8s/client.ts';
import { formatMicroTime } from '../k8s/time.ts';
import type { KubeEvent } from '../recorder/types.ts';
import { eventJson } from './k8s-event-sink.ts';

/**
 * What webhook receivers and the event file get: the core/v1 Event exactly as the API sink would create it
 * (so kubernetes-event-exporter or kube-eventer style consumers can decode it as a v1.Event), plus
 * `eventTime` at microsecond precision, since the wire timestamps are truncated to seconds and a
 * long-lived archive needs to order events within one second, and `nodeName`, the node that saw it.
 */
export function persistedEvent(event: KubeEvent, nodeName: string): JsonObject {
  return { ...eventJson(event), eventTime: formatMicroTime(event.firstTimestamp), nodeName };
}

/** One line of the event file. */
export function persistedLine(event: KubeEvent, nodeName: string): string {
  return `${JSON.stringify(persistedEvent(event, nodeName))}\n`;
}
