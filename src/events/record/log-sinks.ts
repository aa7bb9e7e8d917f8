import type { Logger } from '../../core/logger.ts';
import type { Broadcaster, Watcher } from './broadcaster.ts';
import type { KubeEvent } from './types.ts';

/**
 * The log watchers hang off the same broadcaster as the API sink but have their own queues and no
 * correlation (client-go's StartStructuredLogging and StartLogging), so every occurrence is logged even
 * when the API sink aggregates, spam-filters or cannot reach the server.
 */

/** The fields the structured sink logs for each event. */
export function eventLogFields(event: KubeEvent): Record<string, unknown> {
  const fields = {
    type: event.type,
    reason: event.reason,
    message: event.message,
    source: event.source.component,
    host: event.source.host,
    count: event.count,
    object: `${event.involvedObject.kind}/${event.involvedObject.name}`,
    event: `${event.namespace}/${event.name}`,
  };
  // The evidence (events/evidence.ts) where the event has one.
  return event.annotations === undefined ? fields : { ...fields, annotations: event.annotations };
}

export function structuredLogHandler(logger: Logger): (event: KubeEvent) => void {
  return (event) => logger.info(eventLogFields(event), 'Event occurred');
}

/** The human line of client-go's StartLogging, with the object reduced to kind/name. */
export function formatEventLine(event: KubeEvent): string {
  const o = event.involvedObject;
  return `Event(${o.kind}/${o.name}): type: '${event.type}' reason: '${event.reason}' ${event.message}`;
}

export function plainLogHandler(write: (line: string) => void): (event: KubeEvent) => void {
  return (event) => write(formatEventLine(event));
}

export function startStructuredLogging(broadcaster: Broadcaster<KubeEvent>, logger: Logger): Watcher {
  return broadcaster.watch('structured-log', structuredLogHandler(logger));
}

export function startLogging(broadcaster: Broadcaster<KubeEvent>, write: (line: string) => void): Watcher {
  return broadcaster.watch('log', plainLogHandler(write));
}
