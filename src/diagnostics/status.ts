// What a finished request's status says (its phase and Complete condition) and the bundle's manifest.
import type { NodeDiagnosticRequest, NodeDiagnosticStatus } from '../kube/node-diagnostics.ts';
import type { CollectedBundle } from './collect.ts';

/**
 * The CRD's maxLength of status.message (deploy/components/diagnostics/crd.yaml). A longer message makes
 * the API server refuse the whole status patch (422), so the request would never finish.
 */
export const STATUS_MESSAGE_MAX = 4096;

/** `text` within `max` characters (the CRD counts Unicode code points), its cut said at the end. */
export function bounded(text: string, max = STATUS_MESSAGE_MAX): string {
  const chars = [...text];
  if (chars.length <= max) return text;
  const note = ` … (cut from ${chars.length} characters)`;
  return chars.slice(0, Math.max(0, max - [...note].length)).join('') + note;
}

export function finalStatus(
  ok: boolean,
  text: string,
  startedAt: string | undefined,
  now: number,
  failReason = 'UploadFailed',
): NodeDiagnosticStatus {
  const at = new Date(now).toISOString();
  const message = bounded(text);
  return {
    phase: ok ? 'Succeeded' : 'Failed',
    message,
    ...(startedAt ? { startedAt } : {}),
    completedAt: at,
    conditions: [
      {
        type: 'Complete',
        status: ok ? 'True' : 'False',
        reason: ok ? 'Uploaded' : failReason,
        message,
        lastTransitionTime: at,
      },
    ],
  };
}

export function successMessage(bytes: number, bundle: CollectedBundle): string {
  const labels: readonly [string, string][] = [
    ['truncated', 'truncated'],
    ['skipped', 'skipped'],
    ['absent', 'absent'],
    ['failed', 'error'],
  ];
  const notes: string[] = [];
  for (const [label, status] of labels) {
    const names = bundle.parts.filter((p) => p.status === status).map((p) => p.name);
    if (names.length > 0) notes.push(`${label}: ${names.join(', ')}`);
  }
  return `uploaded ${bytes} bytes${notes.length ? `; ${notes.join('; ')}` : ''} (see manifest.json)`;
}

/** What the bundle holds and what it leaves out on purpose, as its first file an operator reads. */
export function bundleManifest(
  req: NodeDiagnosticRequest,
  bundle: CollectedBundle,
  facts: { sinceMinutes: number; maxBytes: number; createdAt: number },
): { name: string; data: Buffer } {
  const manifest = {
    kind: 'NodeDiagnosticBundle',
    request: req.name,
    node: req.nodeName,
    createdAt: new Date(facts.createdAt).toISOString(),
    sinceMinutes: facts.sinceMinutes,
    maxBytes: facts.maxBytes,
    contentBytes: bundle.contentBytes,
    parts: bundle.parts,
    neverCollected: ['environment variables', 'kubeconfig files', 'service-account tokens', 'Secrets'],
  };
  return { name: 'manifest.json', data: Buffer.from(`${JSON.stringify(manifest, null, 2)}\n`) };
}
