/**
 * Server-side dry runs of rendered manifests (`kubectl apply --dry-run=server --validate=strict`)
 * against the real kube-apiserver + etcd of the e2e harness, with the real prometheus-operator CRDs
 * (from the operator's Go module, test/tools/go-tools.sh) installed, so ServiceMonitor and
 * PrometheusRule specs are checked against the operator's own schemas. The server runs defaulting,
 * schema validation (unknown fields are errors), admission and RBAC escalation checks, then discards
 * the objects. Used by test/deploy/server-dry-run.test.ts and test/helm/server-dry-run.test.ts.
 */
import assert from 'node:assert/strict';
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { stringify } from 'yaml';
import { ensureGoTools } from './go-tools.ts';

export const KUBECTL = '/usr/bin/kubectl';

type Harness = typeof import('../e2e/harness/controlplane.ts');
type ControlPlane = Awaited<ReturnType<Harness['startControlPlane']>>;
export interface Manifest {
  kind: string;
  metadata: { name: string };
}
export interface KubectlOutcome {
  code: number;
  stdout: string;
  stderr: string;
}

export interface DryRunServer {
  dryRun(docs: readonly Manifest[]): Promise<KubectlOutcome>;
  kubectl(args: string[]): Promise<KubectlOutcome>;
  stop(): Promise<void>;
}

/** Why the dry-run tests cannot run here (kubectl, harness, binaries or Go tools missing), or false. */
export async function dryRunAvailability(): Promise<{
  skip: string | false;
  start?: () => Promise<DryRunServer>;
}> {
  if (!existsSync(KUBECTL)) return { skip: `${KUBECTL} not found` };
  let harness: Harness;
  try {
    harness = await import('../e2e/harness/controlplane.ts');
  } catch (err) {
    return { skip: `control-plane harness unavailable: ${(err as Error).message.split('\n')[0]}` };
  }
  let binaries: Awaited<ReturnType<Harness['ensureControlPlaneBinaries']>>;
  let crdDir: string;
  try {
    binaries = await harness.ensureControlPlaneBinaries();
    crdDir = (await ensureGoTools()).crdDir;
  } catch (err) {
    return { skip: `binaries unavailable: ${(err as Error).message.split('\n').slice(0, 3).join(' ')}` };
  }
  return { skip: false, start: () => startDryRunServer(harness, binaries, crdDir) };
}

export const toYaml = (docs: readonly object[]): string => docs.map((d) => stringify(d)).join('---\n');

async function startDryRunServer(
  harness: Harness,
  binaries: Awaited<ReturnType<Harness['ensureControlPlaneBinaries']>>,
  crdDir: string,
): Promise<DryRunServer> {
  const cp: ControlPlane = await harness.startControlPlane({ binaries });
  const home = mkdtempSync(join(tmpdir(), 'npd-kube-home-'));
  const kubectl = (args: string[], input?: string) =>
    cp.kubectlResult(args, { input, home, timeoutMs: 180_000 });
  const crds = readdirSync(crdDir)
    .filter((f) => /^monitoring\.coreos\.com_.*\.yaml$/.test(f))
    .map((f) => readFileSync(join(crdDir, f), 'utf8'));
  assert.ok(crds.length >= 2, `no prometheus-operator CRDs in ${crdDir}`);
  // Server-side apply: the operator's CRDs are too large for the last-applied annotation.
  const applied = await kubectl(['apply', '--server-side', '-f', '-'], crds.join('\n---\n'));
  assert.equal(applied.code, 0, `installing the prometheus-operator CRDs failed:\n${applied.stderr}`);
  // `kubectl wait` errors while a just-created CRD has no status yet: poll until it is Established.
  const deadline = Date.now() + 120_000;
  for (;;) {
    const established = await kubectl([
      'wait',
      '--for=condition=Established',
      '--timeout=30s',
      'crd/servicemonitors.monitoring.coreos.com',
      'crd/prometheusrules.monitoring.coreos.com',
    ]);
    if (established.code === 0) break;
    assert.ok(Date.now() < deadline, `the CRDs did not become Established: ${established.stderr}`);
    await new Promise((r) => setTimeout(r, 500));
  }
  return {
    dryRun: (docs) => kubectl(['apply', '--dry-run=server', '--validate=strict', '-f', '-'], toYaml(docs)),
    kubectl: (args) => kubectl(args),
    async stop() {
      await cp.stop();
      rmSync(home, { recursive: true, force: true });
    },
  };
}

/** kubectl prints one "<resource>/<name> created (server dry run)" line per object. */
export function assertAllAccepted(docs: readonly Manifest[], r: KubectlOutcome): void {
  assert.equal(r.code, 0, `kubectl apply --dry-run=server failed:\n${r.stderr}\n${r.stdout}`);
  const lines = r.stdout.trim().split('\n');
  assert.equal(lines.length, docs.length, r.stdout);
  for (const d of docs) {
    assert.ok(
      lines.some((l) => l.includes(`/${d.metadata.name} `) && l.endsWith('(server dry run)')),
      `${d.kind}/${d.metadata.name} not accepted:\n${r.stdout}`,
    );
  }
}
