import type { FlagSpec } from '../config/flag-parser.ts';
import { B, D, type FlagReader, S } from './flag-specs.ts';
import { toAddressList } from './flag-values.ts';

/** The flags of on-demand diagnostics bundles (docs/diagnostics.md). */
export interface DiagnosticsOptions {
  /** --diagnostics: serve NodeDiagnostic requests for this node (needs deploy/components/diagnostics). */
  readonly diagnostics: boolean;
  readonly diagnosticsPollMs: number;
  /** --diagnostics-upload-allow: addresses or CIDRs an uploadURL may reach although they are on the node. */
  readonly diagnosticsUploadAllow: readonly string[];
  /** --diagnostics-finished-ttl: finished requests are deleted this long after completion; 0 keeps them. */
  readonly diagnosticsFinishedTtlMs: number;
  /** --diagnostics-key-file: where the upload key is kept across restarts; '' keeps it in memory only. */
  readonly diagnosticsKeyFile: string;
  /** --diagnostics-allow-plain-upload-url: also serve requests whose uploadURL every node can read. */
  readonly diagnosticsAllowPlainUploadURL: boolean;
}

export const DIAGNOSTICS_FLAGS: readonly FlagSpec[] = [
  B(
    'diagnostics',
    'Serve NodeDiagnostic requests for this node (CRD and RBAC: deploy/components/diagnostics)',
    false,
  ),
  D('diagnostics-poll-period', 'How often NodeDiagnostic requests for this node are listed', '10s'),
  D(
    'diagnostics-finished-ttl',
    'Finished NodeDiagnostic requests of this node are deleted after this; 0 keeps them',
    '24h',
  ),
  S(
    'diagnostics-upload-allow',
    'Addresses or CIDRs (comma-separated) an uploadURL may resolve to although loopback, link-local or the node',
  ),
  S(
    'diagnostics-key-file',
    'File keeping the key upload URLs are sealed to (created 0600 when absent); empty: a new key at each start',
  ),
  B(
    'diagnostics-allow-plain-upload-url',
    'Also serve requests with a plain uploadURL, which every node can read (default: sealedUploadURL only)',
    false,
  ),
];

export function diagnosticsOptions(f: FlagReader): DiagnosticsOptions {
  return {
    diagnostics: f.get('diagnostics') === 'true',
    diagnosticsPollMs: f.dur('diagnostics-poll-period'),
    diagnosticsUploadAllow: toAddressList(
      'diagnostics-upload-allow',
      f.get('diagnostics-upload-allow'),
      f.errors,
    ),
    diagnosticsFinishedTtlMs: f.dur('diagnostics-finished-ttl'),
    diagnosticsKeyFile: f.get('diagnostics-key-file'),
    diagnosticsAllowPlainUploadURL: f.get('diagnostics-allow-plain-upload-url') === 'true',
  };
}
