import type { JsonObject } from '../../kube/client.ts';
import { formatMicroTime } from '../../kube/time.ts';
import { eventJson } from '../record/kube-sink.ts';
import type { KubeEvent } from '../record/types.ts';

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
