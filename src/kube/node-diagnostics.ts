import type { JsonObject, KubeClient } from './client.ts';

/** The NodeDiagnostic custom resource (deploy/components/diagnostics/crd.yaml). */
export const NODE_DIAGNOSTIC_GROUP = 'node-problem-detector.io';
export const NODE_DIAGNOSTIC_VERSION = 'v1alpha1';
export const NODE_DIAGNOSTIC_PLURAL = 'nodediagnostics';
export const MERGE_PATCH = 'application/merge-patch+json';

const BASE = `/apis/${NODE_DIAGNOSTIC_GROUP}/${NODE_DIAGNOSTIC_VERSION}/${NODE_DIAGNOSTIC_PLURAL}`;

export interface NodeDiagnosticRequest {
  readonly name: string;
  readonly uid: string;
  readonly nodeName: string;
  /** A credential (a presigned URL): never log it or copy it into a status. '' when sealed. */
  readonly uploadURL: string;
  /** The upload URL sealed to this node's agent key (diagnostics/sealed-url.ts); '' when plain. */
  readonly sealedUploadURL: string;
  readonly sinceMinutes: number | undefined;
  readonly maxBytes: number | undefined;
  /** status.phase as found; '' before any agent touched the request. */
  readonly phase: string;
  /** status.attempts: how many times an agent started collecting it. */
  readonly attempts: number | undefined;
  /** status.completedAt in ms, when the request is finished. */
  readonly completedAt: number | undefined;
}

export interface NodeDiagnosticStatus {
  readonly phase: 'Running' | 'Succeeded' | 'Failed';
  readonly message: string;
  readonly attempts?: number;
  readonly bytes?: number;
  readonly startedAt?: string;
  readonly completedAt?: string;
  readonly conditions?: readonly JsonObject[];
}

/** The one call shape this needs: a KubeClient, or a fake. */
export type NodeDiagnosticsClient = Pick<KubeClient, 'request'>;

function obj(value: unknown): JsonObject {
  return value !== null && typeof value === 'object' && !Array.isArray(value) ? (value as JsonObject) : {};
}

const str = (v: unknown): string => (typeof v === 'string' ? v : '');
const time = (v: unknown): number | undefined => {
  const ms = typeof v === 'string' ? Date.parse(v) : Number.NaN;
  return Number.isFinite(ms) ? ms : undefined;
};
const num = (v: unknown): number | undefined => (typeof v === 'number' && Number.isFinite(v) ? v : undefined);

export function parseNodeDiagnostic(raw: JsonObject): NodeDiagnosticRequest {
  const metadata = obj(raw.metadata);
  const spec = obj(raw.spec);
  return {
    name: str(metadata.name),
    uid: str(metadata.uid),
    nodeName: str(spec.nodeName),
    uploadURL: str(spec.uploadURL),
    sealedUploadURL: str(spec.sealedUploadURL),
    sinceMinutes: num(spec.sinceMinutes),
    maxBytes: num(spec.maxBytes),
    phase: str(obj(raw.status).phase),
    attempts: num(obj(raw.status).attempts),
    completedAt: time(obj(raw.status).completedAt),
  };
}

/** Requests per page: one page stays far below the client's body cap even with 8 KiB upload URLs. */
export const LIST_PAGE_SIZE = 100;
/** Enough for any real backlog; finished requests expire (the controller deletes them). */
const MAX_PAGES = 50;
/** The most requests one listing reads: it bounds the agent's memory and each poll's work. */
export const MAX_LISTED = MAX_PAGES * LIST_PAGE_SIZE;

/** One listing of a node's requests. */
export interface NodeDiagnosticList {
  readonly items: readonly NodeDiagnosticRequest[];
  /** False when the listing stopped at MAX_LISTED with more requests left unread. */
  readonly complete: boolean;
}

/**
 * The requests for one node, page by page (limit and continue), so a long backlog is never one answer
 * over the body cap. The field selector needs the CRD's selectableFields entry (on by default since
 * Kubernetes 1.31). No resourceVersion=0: the watch cache would ignore the limit. Past MAX_LISTED it
 * stops and says so, rather than failing: the first MAX_LISTED are still served and expired, which
 * shrinks the backlog.
 */
export async function listNodeDiagnostics(
  client: NodeDiagnosticsClient,
  nodeName: string,
): Promise<NodeDiagnosticList> {
  const out: NodeDiagnosticRequest[] = [];
  let token = '';
  for (let page = 0; page < MAX_PAGES; page++) {
    const query: Record<string, string> = {
      fieldSelector: `spec.nodeName=${nodeName}`,
      limit: String(LIST_PAGE_SIZE),
    };
    if (token !== '') query.continue = token;
    const list = await client.request({ method: 'GET', path: BASE, resource: NODE_DIAGNOSTIC_PLURAL, query });
    for (const item of Array.isArray(list.items) ? list.items : []) out.push(parseNodeDiagnostic(obj(item)));
    token = str(obj(list.metadata).continue);
    if (token === '') return { items: out, complete: true };
  }
  return { items: out, complete: false };
}

/** Deletes a request, only if it still is the object listed (a new one of the same name is kept). */
export async function deleteNodeDiagnostic(
  client: NodeDiagnosticsClient,
  name: string,
  uid: string,
): Promise<void> {
  await client.request({
    method: 'DELETE',
    path: `${BASE}/${encodeURIComponent(name)}`,
    resource: NODE_DIAGNOSTIC_PLURAL,
    body: { kind: 'DeleteOptions', apiVersion: 'v1', preconditions: { uid } },
  });
}

/** A JSON merge patch of the status subresource: custom resources take no strategic merge. */
export async function patchNodeDiagnosticStatus(
  client: NodeDiagnosticsClient,
  name: string,
  status: NodeDiagnosticStatus,
): Promise<void> {
  await client.request({
    method: 'PATCH',
    path: `${BASE}/${encodeURIComponent(name)}/status`,
    resource: `${NODE_DIAGNOSTIC_PLURAL}/status`,
    body: { status },
    contentType: MERGE_PATCH,
  });
}
