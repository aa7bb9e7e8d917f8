// Server-side validation of the rendered manifests: `kubectl apply --dry-run=server --validate=strict`
// against a real kube-apiserver + etcd (test/e2e/harness/controlplane.ts), for deploy/base, the example
// overlay and every component. The API server runs defaulting, schema validation (unknown fields are
// errors), admission and RBAC escalation checks, then discards the objects.
//
// ServiceMonitor and PrometheusRule are prometheus-operator CRDs, absent from a bare API server. The
// test installs two minimal CRDs for them (group, version, kind, names; schema "preserve unknown
// fields"), so the server checks their apiVersion, kind and metadata but not their spec; the spec is
// checked client-side in manifests-metrics.test.ts.
//
// Skipped, with the reason, when kubectl, the harness or the control-plane binaries are unavailable.
// The first run builds the binaries (test/e2e/controlplane/build.sh; 10-25 min cold, cached after).
//   node --import tsx --test test/deploy/server-dry-run.test.ts
import assert from 'node:assert/strict';
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { stringify } from 'yaml';
import { type Doc, KUBECTL, kustomizeWith, renderBase, renderOverlay } from './support.ts';

type Harness = typeof import('../e2e/harness/controlplane.ts');
type ControlPlane = Awaited<ReturnType<Harness['startControlPlane']>>;

async function availability(): Promise<{
  skip: string | false;
  harness?: Harness;
  binaries?: Awaited<ReturnType<Harness['ensureControlPlaneBinaries']>>;
}> {
  if (!existsSync(KUBECTL)) return { skip: `${KUBECTL} not found` };
  let harness: Harness;
  try {
    harness = await import('../e2e/harness/controlplane.ts');
  } catch (err) {
    return { skip: `control-plane harness unavailable: ${(err as Error).message.split('\n')[0]}` };
  }
  if (
    typeof harness.startControlPlane !== 'function' ||
    typeof harness.ensureControlPlaneBinaries !== 'function'
  ) {
    return { skip: 'control-plane harness does not export startControlPlane/ensureControlPlaneBinaries' };
  }
  try {
    return { skip: false, harness, binaries: await harness.ensureControlPlaneBinaries() };
  } catch (err) {
    return {
      skip: `kube-apiserver/etcd binaries unavailable: ${(err as Error).message.split('\n').slice(0, 3).join(' ')}`,
    };
  }
}

const avail = await availability();
if (avail.skip) process.stderr.write(`server-dry-run: skipped: ${avail.skip}\n`);

const toYaml = (docs: readonly Doc[]): string => docs.map((d) => stringify(d)).join('---\n');

interface MutableDaemonSet {
  spec: {
    template: {
      spec: {
        containers: { securityContext: Record<string, unknown> }[];
        volumes: { hostPath?: { type?: string } }[];
      };
    };
  };
}

/** Minimal CRDs: enough for the API server to know the kinds; any spec is accepted. */
function minimalCrd(kind: string, plural: string): Doc {
  return {
    apiVersion: 'apiextensions.k8s.io/v1',
    kind: 'CustomResourceDefinition',
    metadata: { name: `${plural}.monitoring.coreos.com` },
    spec: {
      group: 'monitoring.coreos.com',
      scope: 'Namespaced',
      names: { kind, listKind: `${kind}List`, plural, singular: kind.toLowerCase() },
      versions: [
        {
          name: 'v1',
          served: true,
          storage: true,
          schema: { openAPIV3Schema: { type: 'object', 'x-kubernetes-preserve-unknown-fields': true } },
        },
      ],
    },
  };
}

describe('server-side dry run against a real kube-apiserver', { skip: avail.skip }, () => {
  let cp: ControlPlane;
  let home: string;

  const dryRun = (docs: readonly Doc[]) =>
    cp.kubectlResult(['apply', '--dry-run=server', '--validate=strict', '-f', '-'], {
      input: toYaml(docs),
      home,
      timeoutMs: 120_000,
    });

  /** kubectl prints one "<resource>/<name> created (server dry run)" line per object. */
  const assertAllAccepted = (docs: readonly Doc[], r: { code: number; stdout: string; stderr: string }) => {
    assert.equal(r.code, 0, `kubectl apply --dry-run=server failed:\n${r.stderr}\n${r.stdout}`);
    const lines = r.stdout.trim().split('\n');
    assert.equal(lines.length, docs.length, r.stdout);
    for (const d of docs) {
      assert.ok(
        lines.some((l) => l.includes(`/${d.metadata.name} `) && l.endsWith('(server dry run)')),
        `${d.kind}/${d.metadata.name} not accepted:\n${r.stdout}`,
      );
    }
  };

  before(
    async () => {
      cp = await avail.harness!.startControlPlane({ binaries: avail.binaries! });
      home = mkdtempSync(join(tmpdir(), 'npd-kube-home-'));
      const crds = [
        minimalCrd('ServiceMonitor', 'servicemonitors'),
        minimalCrd('PrometheusRule', 'prometheusrules'),
      ];
      await cp.kubectl(['apply', '-f', '-'], { input: toYaml(crds), home });
      await cp.kubectl(
        [
          'wait',
          '--for=condition=Established',
          '--timeout=60s',
          ...crds.map((c) => `crd/${c.metadata.name}`),
        ],
        { home },
      );
    },
    { timeout: 60 * 60_000 },
  );

  after(async () => {
    await cp?.stop();
    if (home) rmSync(home, { recursive: true, force: true });
  });

  test('deploy/base is accepted', async () => {
    const docs = renderBase();
    assertAllAccepted(docs, await dryRun(docs));
  });

  test('deploy/overlays/example (base + metrics) is accepted', async () => {
    const docs = renderOverlay();
    assert.ok(docs.some((d) => d.kind === 'ServiceMonitor') && docs.some((d) => d.kind === 'PrometheusRule'));
    assertAllAccepted(docs, await dryRun(docs));
  });

  for (const components of [
    ['taint'],
    ['journald'],
    ['node-probes'],
    ['gpu'],
    ['journald', 'node-probes', 'gpu'],
  ]) {
    test(`base + ${components.join(' + ')} is accepted`, async () => {
      const docs = kustomizeWith(components);
      assertAllAccepted(docs, await dryRun(docs));
    });
  }

  test('Pod Security: a baseline namespace accepts the DaemonSet with a warning, but not its pod', async () => {
    const ns = 'npd-baseline';
    await cp.kubectl(['create', 'namespace', ns], { home });
    await cp.kubectl(['label', 'namespace', ns, 'pod-security.kubernetes.io/enforce=baseline'], { home });
    const ds = structuredClone(renderBase().find((d) => d.kind === 'DaemonSet')!);
    ds.metadata.namespace = ns;
    const accepted = await dryRun([ds]);
    assert.equal(accepted.code, 0, `the DaemonSet itself is admitted:\n${accepted.stderr}`);
    assert.match(accepted.stderr, /would violate PodSecurity "baseline:latest".*privileged/);
    const template = (ds as unknown as { spec: { template: { spec: Doc } } }).spec.template;
    const pod = {
      apiVersion: 'v1',
      kind: 'Pod',
      metadata: { name: 'npd-pod', namespace: ns },
      spec: template.spec,
    };
    const rejected = await dryRun([pod as unknown as Doc]);
    assert.notEqual(rejected.code, 0, 'the pod the DaemonSet controller would create is refused');
    assert.match(rejected.stderr, /violates PodSecurity "baseline:latest": .*privileged \(container/);
    await cp.kubectl(
      ['label', '--overwrite', 'namespace', ns, 'pod-security.kubernetes.io/enforce=privileged'],
      {
        home,
      },
    );
    const admitted = await dryRun([pod as unknown as Doc]);
    assert.equal(admitted.code, 0, `a privileged namespace admits the pod:\n${admitted.stderr}`);
  });

  test('a dry run persists nothing', async () => {
    const r = await cp.kubectlResult(['get', 'daemonset', '-n', 'kube-system', 'node-problem-detector'], {
      home,
    });
    assert.notEqual(r.code, 0);
    assert.match(r.stderr, /NotFound|not found/);
  });

  test('control: the server rejects a broken DaemonSet (the dry run really validates)', async () => {
    const docs = renderBase();
    const ds = structuredClone(docs.find((d) => d.kind === 'DaemonSet')!) as Doc & MutableDaemonSet;
    const container = ds.spec.template.spec.containers[0]!;
    container.securityContext.privilegd = container.securityContext.privileged; // misspelt field
    let r = await dryRun([ds]);
    assert.notEqual(r.code, 0, 'an unknown field must be rejected');
    assert.match(r.stderr, /unknown field/i);
    delete container.securityContext.privilegd;
    const hostPath = ds.spec.template.spec.volumes.find((v) => v.hostPath)?.hostPath;
    assert.ok(hostPath);
    hostPath.type = 'NotAType';
    r = await dryRun([ds]);
    assert.notEqual(r.code, 0, 'an invalid hostPath type must be rejected');
    assert.match(r.stderr, /hostPath\.type|Unsupported value/);
  });
});
