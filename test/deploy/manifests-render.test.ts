// Client-side checks of the kustomize tree in deploy/: deploy/base and the example overlay render to
// well-formed objects of the expected kinds, in kube-system, with the expected images.
// The other manifests-*.test.ts files check RBAC, ConfigMaps, the DaemonSet and the metrics component.
//   node --import tsx --test test/deploy/manifests-render.test.ts
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, test } from 'node:test';
import {
  agentContainer,
  type Doc,
  one,
  ROOT,
  renderBase,
  renderOverlay,
  kubectlSkip as skip,
} from './support.ts';

/** Every document has apiVersion, kind and metadata.name, and no two share kind, namespace and name. */
function assertWellFormed(label: string, docs: readonly Doc[]): void {
  assert.ok(docs.length > 0, `${label} rendered nothing`);
  const ids = new Set<string>();
  for (const d of docs) {
    assert.equal(typeof d.apiVersion, 'string', `${label}: apiVersion of ${JSON.stringify(d).slice(0, 80)}`);
    assert.equal(typeof d.kind, 'string', `${label}: kind`);
    assert.equal(typeof d.metadata?.name, 'string', `${label}: metadata.name of a ${d.kind}`);
    const id = `${d.kind}/${d.metadata.namespace ?? ''}/${d.metadata.name}`;
    assert.ok(!ids.has(id), `${label}: duplicate ${id}`);
    ids.add(id);
  }
}

describe('deploy/ kustomize: rendering', { skip }, () => {
  const base = skip ? [] : renderBase();
  const overlay = skip ? [] : renderOverlay();

  test('base and example overlay render; every document has apiVersion, kind and metadata.name', () => {
    assertWellFormed('base', base);
    assertWellFormed('overlay', overlay);
    assert.deepEqual(base.map((d) => d.kind).sort(), [
      'ClusterRole',
      'ClusterRoleBinding',
      'ConfigMap',
      'ConfigMap',
      'DaemonSet',
      'ServiceAccount',
      'ValidatingAdmissionPolicy',
      'ValidatingAdmissionPolicyBinding',
    ]);
    assert.deepEqual(overlay.map((d) => d.kind).sort(), [
      'ClusterRole',
      'ClusterRoleBinding',
      'ConfigMap',
      'ConfigMap',
      'ConfigMap', // the Grafana dashboard (components/metrics)
      'DaemonSet',
      'PrometheusRule',
      'Service',
      'ServiceAccount',
      'ServiceMonitor',
      'ValidatingAdmissionPolicy',
      'ValidatingAdmissionPolicyBinding',
    ]);
  });

  test('namespaced objects live in kube-system', () => {
    for (const d of overlay) {
      if (d.kind.startsWith('Cluster'))
        assert.equal(d.metadata.namespace, undefined, `${d.kind} is cluster-scoped`);
      else assert.equal(d.metadata.namespace, 'kube-system', `${d.kind}/${d.metadata.name}`);
    }
  });

  test('images: base uses the package version; the example overlay rewrites the registry', () => {
    const pkg = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as { version: string };
    assert.equal(agentContainer(one(base, 'DaemonSet')).image, `node-problem-detector:${pkg.version}`);
    assert.match(
      agentContainer(one(overlay, 'DaemonSet')).image,
      /^[a-z0-9.-]+\/node-problem-detector:[\w.-]+$/,
    );
  });
});
