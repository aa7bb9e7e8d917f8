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
  /** A credential (a presigned URL): never log it or copy it into a status. */
  readonly uploadURL: string;
  readonly sinceMinutes: number | undefined;
  readonly maxBytes: number | undefined;
  /** status.phase as found; '' before any agent touched the request. */
  readonly phase: string;
  /** status.attempts: how many times an agent started collecting it. */
  readonly attempts: number | undefined;
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
const num = (v: unknown): number | undefined => (typeof v === 'number' && Number.isFinite(v) ? v : undefined);

export function parseNodeDiagnostic(raw: JsonObject): NodeDiagnosticRequest {
  const metadata = obj(raw.metadata);
  const spec = obj(raw.spec);
  return {
    name: str(metadata.name),
    uid: str(metadata.uid),
    nodeName: str(spec.nodeName),
    uploadURL: str(spec.uploadURL),
    sinceMinutes: num(spec.sinceMinutes),
    maxBytes: num(spec.maxBytes),
    phase: str(obj(raw.status).phase),
    attempts: num(obj(raw.status).attempts),
  };
}

/**
 * The requests for one node. The field selector needs the CRD's selectableFields entry (on by default
 * since Kubernetes 1.31); resourceVersion=0 lets the API server answer from its watch cache.
 */
export async function listNodeDiagnostics(
  client: NodeDiagnosticsClient,
  nodeName: string,
): Promise<NodeDiagnosticRequest[]> {
  const list = await client.request({
    method: 'GET',
    path: BASE,
    resource: NODE_DIAGNOSTIC_PLURAL,
    query: { fieldSelector: `spec.nodeName=${nodeName}`, resourceVersion: '0' },
  });
  const items = Array.isArray(list.items) ? list.items : [];
  return items.map((item) => parseNodeDiagnostic(obj(item)));
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
