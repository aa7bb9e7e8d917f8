// Server-side validation of the rendered manifests: `kubectl apply --dry-run=server --validate=strict`
// against a real kube-apiserver + etcd (test/e2e/harness/controlplane.ts), for deploy/base, the example
// overlay and every component (taint, journald, node-probes, gpu and its variants, diagnostics). The API server runs
// defaulting, schema validation (unknown fields are errors), admission and RBAC escalation checks, then
// discards the objects.
//
// ServiceMonitor and PrometheusRule are checked against the real prometheus-operator CRDs (from its Go
// module, test/tools/go-tools.sh; test/support/dry-run.ts installs them), so their specs are validated too.
//
// Skipped, with the reason, when kubectl, the harness, the control-plane binaries or the Go tools are
// unavailable. The first run builds them (10-25 min cold, cached after).
//   node --import tsx --test test/deploy/server-dry-run.test.ts
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { assertAllAccepted, type DryRunServer, dryRunAvailability } from '../support/dry-run.ts';
import { type Doc, kustomizeWith, renderBase, renderOverlay } from './support.ts';

const avail = await dryRunAvailability();
if (avail.skip) process.stderr.write(`server-dry-run: skipped: ${avail.skip}\n`);

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

describe('server-side dry run against a real kube-apiserver', { skip: avail.skip }, () => {
  let server: DryRunServer;
  const dryRun = (docs: readonly Doc[]) => server.dryRun(docs);

  before(
    async () => {
      server = await avail.start!();
    },
    { timeout: 60 * 60_000 },
  );

  after(async () => {
    await server?.stop();
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
    ['gpu-runtime-class'],
    ['gpu-gke'],
    ['gpu-operator'],
    ['pstore'],
    ['flow-control'],
    ['journald', 'node-probes', 'gpu'],
  ]) {
    test(`base + ${components.join(' + ')} is accepted`, async () => {
      const docs = kustomizeWith(components);
      assertAllAccepted(docs, await dryRun(docs));
    });
  }

  test('Pod Security: a baseline namespace accepts the DaemonSet with a warning, but not its pod', async () => {
    const ns = 'npd-baseline';
    const ok = async (args: string[]) => assert.equal((await server.kubectl(args)).code, 0, args.join(' '));
    await ok(['create', 'namespace', ns]);
    await ok(['label', 'namespace', ns, 'pod-security.kubernetes.io/enforce=baseline']);
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
    await ok(['label', '--overwrite', 'namespace', ns, 'pod-security.kubernetes.io/enforce=privileged']);
    const admitted = await dryRun([pod as unknown as Doc]);
    assert.equal(admitted.code, 0, `a privileged namespace admits the pod:\n${admitted.stderr}`);
  });

  test('base + diagnostics component (CRD included) is accepted', async () => {
    const docs = kustomizeWith(['diagnostics']);
    assert.ok(docs.some((d) => d.kind === 'CustomResourceDefinition'));
    assertAllAccepted(docs, await dryRun(docs));
  });

  test('a dry run persists nothing', async () => {
    const r = await server.kubectl(['get', 'daemonset', '-n', 'kube-system', 'node-problem-detector']);
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

  test('control: the real PrometheusRule CRD rejects a rule with a misspelt field', async () => {
    const rule = structuredClone(renderOverlay().find((d) => d.kind === 'PrometheusRule')!);
    const groups = (rule.spec as { groups: { rules: Record<string, unknown>[] }[] }).groups;
    groups[0]!.rules[0]!.exprr = groups[0]!.rules[0]!.expr; // unknown field: a minimal CRD would accept it
    const r = await dryRun([rule]);
    assert.notEqual(r.code, 0, 'the operator schema must reject an unknown field');
    assert.match(r.stderr, /unknown field "spec\.groups\[0\]\.rules\[0\]\.exprr"/);
  });
});
