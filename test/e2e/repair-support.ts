/**
 * The repair controllers' real pieces for the consumer tests: the CRDs, NHC's webhook configuration and
 * the NHC controller, built from their pinned Go modules by test/tools/repair-consumers/build.sh.
 */
import { execFileSync } from 'node:child_process';
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { parseAllDocuments, parse as parseYaml, stringify } from 'yaml';
import type { ControlPlane } from './harness/controlplane.ts';
import { REPO_ROOT } from './harness/controlplane.ts';

export const EXAMPLES = join(REPO_ROOT, 'deploy', 'examples');

export interface RepairConsumers {
  NHC_MANAGER: string;
  NHC_CRDS: string;
  NHC_WEBHOOK: string;
  CAPI_CRDS: string;
}

/** Runs the build script (a no-op when cached) and returns the paths it prints. */
export function repairConsumers(): RepairConsumers {
  const out = execFileSync('bash', [join(REPO_ROOT, 'test/tools/repair-consumers/build.sh')], {
    encoding: 'utf8',
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  const paths = Object.fromEntries(
    out
      .trim()
      .split('\n')
      .map((l) => l.split('=', 2) as [string, string]),
  );
  return paths as unknown as RepairConsumers;
}

/** Installs every CRD of a folder and waits until the API server serves them. */
export async function installCrds(cp: ControlPlane, dir: string): Promise<void> {
  const files = readdirSync(dir).filter((f) => f.endsWith('.yaml'));
  for (const f of files) await cp.kubectl(['apply', '--server-side', '-f', join(dir, f)]);
  for (const f of files) {
    const name = (parseYaml(readFileSync(join(dir, f), 'utf8')) as { metadata: { name: string } }).metadata
      .name;
    await cp.kubectl(['wait', '--for=condition=Established', '--timeout=60s', `crd/${name}`]);
  }
}

/** A shipped example as an object, to change for a test (durations, selector) or to break. */
export function example<T = Record<string, unknown>>(name: string): T {
  const docs = parseAllDocuments(readFileSync(join(EXAMPLES, name), 'utf8'));
  return docs[0]?.toJS() as T;
}

/** `kubectl apply --server-side [--dry-run=server]` of an object given on stdin. */
export function applyObject(
  cp: ControlPlane,
  obj: unknown,
  opts: { dryRun?: boolean } = {},
): ReturnType<ControlPlane['kubectlResult']> {
  const args = ['apply', '--server-side', '--field-manager=npd-e2e', '-f', '-'];
  if (opts.dryRun) args.push('--dry-run=server');
  return cp.kubectlResult(args, { input: stringify(obj) });
}
