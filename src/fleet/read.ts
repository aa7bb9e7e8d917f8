import { EVIDENCE_ANNOTATION } from '../core/evidence.ts';
import type { JsonObject, KubeClient } from '../kube/client.ts';
import { ApiError } from '../kube/errors.ts';
import { parseKubeTime } from '../kube/time.ts';
import { type Consumer, machineHealthCheck, nodeHealthCheck } from './consumers.ts';
import { type Json, obj, str, strings } from './json.ts';
import type { FleetNode, NodeCondition } from './problems.ts';

/** One Node event from the agent, as the fleet view shows it. */
export interface NodeEvent {
  readonly node: string;
  readonly type: string;
  readonly reason: string;
  readonly message: string;
  readonly source: string;
  readonly count: number;
  /** Epoch ms of the last occurrence; 0 when the event has no time at all. */
  readonly at: number;
  /** What raised it (the node-problem-detector.io/evidence annotation, `kmsg/kernel`), when the event says. */
  readonly evidence?: string;
}

export interface FleetState {
  readonly nodes: readonly FleetNode[];
  readonly events: readonly NodeEvent[];
  readonly consumers: readonly Consumer[];
  /** What could not be read and why (a consumer's CRD that is forbidden to this user, ...). */
  readonly notes: readonly string[];
}

const PAGE = '500';
/** Pages read per list at most: 500 × 100 covers the largest supported cluster's Nodes and more. */
const MAX_PAGES = 100;

/** Every item of a list, page by page (limit/continue), so a 5,000-node cluster is read in bounded pieces. */
async function listAll(
  client: KubeClient,
  path: string,
  resource: string,
  query: Json = {},
): Promise<Json[]> {
  const items: Json[] = [];
  let cont = '';
  for (let page = 0; page < MAX_PAGES; page++) {
    const q: Record<string, string> = { ...strings(query), limit: PAGE, ...(cont ? { continue: cont } : {}) };
    const body: JsonObject = await client.request({ method: 'GET', path, resource, query: q });
    if (Array.isArray(body.items)) items.push(...body.items.map(obj));
    cont = str(obj(body.metadata).continue);
    if (!cont) return items;
  }
  throw new Error(`${path}: more than ${MAX_PAGES} pages of ${PAGE}`);
}

export function toNode(raw: Json): FleetNode {
  const meta = obj(raw.metadata);
  const conditions = (
    Array.isArray(obj(raw.status).conditions) ? (obj(raw.status).conditions as unknown[]) : []
  )
    .map(obj)
    .map(
      (c): NodeCondition => ({
        type: str(c.type),
        status: str(c.status),
        reason: str(c.reason),
        message: str(c.message),
        since: parseKubeTime(c.lastTransitionTime),
      }),
    );
  return {
    name: str(meta.name),
    labels: strings(meta.labels),
    annotations: strings(meta.annotations),
    providerID: str(obj(raw.spec).providerID),
    conditions,
  };
}

/**
 * A Node event the agent wrote: it names the node as its host (source.host, or reportingInstance for
 * events.k8s.io events) and is not the kubelet's own. undefined for any other event.
 */
export function toAgentEvent(raw: Json): NodeEvent | undefined {
  const node = str(obj(raw.involvedObject).name);
  const source = str(obj(raw.source).component) || str(raw.reportingComponent);
  const host = str(obj(raw.source).host) || str(raw.reportingInstance);
  if (host !== node || source === 'kubelet' || source === '') return undefined;
  const at =
    parseKubeTime(raw.lastTimestamp) ??
    parseKubeTime(obj(raw.series).lastObservedTime) ??
    parseKubeTime(raw.eventTime) ??
    parseKubeTime(obj(raw.metadata).creationTimestamp) ??
    0;
  const series = typeof obj(raw.series).count === 'number' ? (obj(raw.series).count as number) : 0;
  const count = typeof raw.count === 'number' ? raw.count : Math.max(series, 1);
  const event = {
    node,
    type: str(raw.type),
    reason: str(raw.reason),
    message: str(raw.message),
    source,
    count,
    at,
  };
  const evidence = str(obj(obj(raw.metadata).annotations)[EVIDENCE_ANNOTATION]);
  return evidence === '' ? event : { ...event, evidence };
}

/** Nodes (one, or all), their agent events, and the repair controllers configured in the cluster. */
export async function readFleet(client: KubeClient, nodeName?: string): Promise<FleetState> {
  const notes: string[] = [];
  const nodes = nodeName
    ? [
        toNode(
          await client.request({
            method: 'GET',
            path: `/api/v1/nodes/${encodeURIComponent(nodeName)}`,
            resource: 'nodes',
          }),
        ),
      ]
    : (await listAll(client, '/api/v1/nodes', 'nodes')).map(toNode);
  const selector = ['involvedObject.kind=Node', ...(nodeName ? [`involvedObject.name=${nodeName}`] : [])];
  const events = (await listAll(client, '/api/v1/events', 'events', { fieldSelector: selector.join(',') }))
    .map(toAgentEvent)
    .filter((e): e is NodeEvent => e !== undefined);
  const consumers = [
    ...(
      await optionalList(
        client,
        '/apis/remediation.medik8s.io/v1alpha1/nodehealthchecks',
        'NodeHealthChecks',
        notes,
      )
    ).map(nodeHealthCheck),
    ...(
      await optionalList(
        client,
        '/apis/cluster.x-k8s.io/v1beta2/machinehealthchecks',
        'MachineHealthChecks',
        notes,
      )
    ).map(machineHealthCheck),
  ];
  return { nodes, events, consumers, notes };
}

/** A consumer's objects; none when its CRD is not installed (404), a note when they cannot be read. */
async function optionalList(
  client: KubeClient,
  path: string,
  what: string,
  notes: string[],
): Promise<Json[]> {
  try {
    return await listAll(client, path, what.toLowerCase());
  } catch (err) {
    if (err instanceof ApiError && err.statusCode === 404) return [];
    notes.push(`${what} not read: ${err instanceof Error ? err.message : String(err)}`);
    return [];
  }
}
