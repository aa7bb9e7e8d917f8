import type { Registry } from 'prom-client';
import { counter } from '../core/metrics.ts';
import type { PartStatus } from './collect.ts';

const STAGES = [
  'list',
  'status',
  'status_rejected',
  'upload',
  'interrupted',
  'expire',
  'target',
  'key',
] as const;
export type FailureStage = (typeof STAGES)[number];

export interface DiagnosticsMetrics {
  request(result: 'succeeded' | 'failed'): void;
  uploaded(bytes: number): void;
  failure(stage: FailureStage): void;
  ignored(reason: 'other_node'): void;
  part(status: PartStatus): void;
  expired(): void;
  listOverflow(): void;
}

export function diagnosticsMetrics(registry: Registry): DiagnosticsMetrics {
  const requests = counter(registry, {
    name: 'npd_diagnostics_requests_total',
    help: 'NodeDiagnostic requests handled by this agent, by result.',
    labelNames: ['result'],
  });
  const bytes = counter(registry, {
    name: 'npd_diagnostics_uploaded_bytes_total',
    help: 'Bytes of diagnostics bundles uploaded (compressed, as sent).',
  });
  const failures = counter(registry, {
    name: 'npd_diagnostics_failures_total',
    help: "Diagnostics failures by stage: list (reading requests), status (writing them), status_rejected (a status the API server refused as invalid, 422: the request is ended as Failed or given up), upload, interrupted (an agent stopped while collecting, twice), expire (deleting a finished request), target (an upload URL refused: plain, or a sealed one that does not open), key (publishing the agent's upload key on the Node).",
    labelNames: ['stage'],
  });
  const ignored = counter(registry, {
    name: 'npd_diagnostics_ignored_total',
    help: 'NodeDiagnostic requests ignored, by reason (other_node: addressed to another node).',
    labelNames: ['reason'],
  });
  const parts = counter(registry, {
    name: 'npd_diagnostics_parts_total',
    help: 'Bundle parts collected, by status (ok, truncated, absent, error, skipped).',
    labelNames: ['status'],
  });
  for (const result of ['succeeded', 'failed']) requests.inc({ result }, 0);
  const expired = counter(registry, {
    name: 'npd_diagnostics_expired_total',
    help: 'Finished NodeDiagnostic requests of this node deleted after their TTL.',
  });
  const overflow = counter(registry, {
    name: 'npd_diagnostics_list_overflow_total',
    help: 'Polls whose listing stopped at its cap of 5,000 NodeDiagnostic requests; the first 5,000 are served and expired, the rest wait.',
  });
  for (const stage of STAGES) failures.inc({ stage }, 0);
  ignored.inc({ reason: 'other_node' }, 0);
  return {
    request: (result) => requests.inc({ result }),
    uploaded: (n) => bytes.inc(n),
    failure: (stage) => failures.inc({ stage }),
    ignored: (reason) => ignored.inc({ reason }),
    part: (status) => parts.inc({ status }),
    expired: () => expired.inc(),
    listOverflow: () => overflow.inc(),
  };
}
