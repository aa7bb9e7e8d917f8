import type { KubeEvent } from './types.ts';

/**
 * The correlator's cache keys, field for field and in the order of client-go's events_cache.go. Fields are
 * joined with an empty separator exactly as upstream does, so two agents (or this port and client-go)
 * bucket the same events together; the theoretical ambiguity of that joining is upstream's too.
 */

/** Dedupe/count key for the event logger, and the key updateState writes under. */
export function eventKey(e: KubeEvent): string {
  const o = e.involvedObject;
  return [
    e.source.component,
    e.source.host,
    o.kind,
    o.namespace,
    o.name,
    o.fieldPath ?? '',
    o.uid,
    o.apiVersion,
    e.type,
    e.reason,
    e.message,
  ].join('');
}

/** Token-bucket key: no reason, message or fieldPath, so one noisy reason starves its siblings. */
export function spamKey(e: KubeEvent): string {
  const o = e.involvedObject;
  return [e.source.component, e.source.host, o.kind, o.namespace, o.name, o.uid, o.apiVersion, e.type].join(
    '',
  );
}

/** EventAggregatorByReasonFunc: [aggregate group key, local key (the message)]. */
export function aggregateKeys(e: KubeEvent): [aggregateKey: string, localKey: string] {
  const o = e.involvedObject;
  const key = [
    e.source.component,
    e.source.host,
    o.kind,
    o.namespace,
    o.name,
    o.uid,
    o.apiVersion,
    e.type,
    e.reason,
    e.reportingComponent,
    e.reportingInstance,
  ].join('');
  return [key, e.message];
}
