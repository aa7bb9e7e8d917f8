// What a finished request's status says (its phase and Complete condition) and the bundle's manifest.
import type { NodeDiagnosticRequest, NodeDiagnosticStatus } from '../kube/node-diagnostics.ts';
import type { CollectedBundle } from './collect.ts';

export function finalStatus(
  ok: boolean,
  message: string,
  startedAt: string | undefined,
  now: number,
  failReason = 'UploadFailed',
): NodeDiagnosticStatus {
  const at = new Date(now).toISOString();
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
