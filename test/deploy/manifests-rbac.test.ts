// Client-side checks of the RBAC in deploy/: the least-privilege ClusterRole bound only to the agent's
// ServiceAccount, in deploy/base, the example overlay and the taint component.
//   node --import tsx --test test/deploy/manifests-rbac.test.ts
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, test } from 'node:test';
import { parseAllDocuments } from 'yaml';
import {
  type Doc,
  EXPECTED_RULES,
  get,
  kustomizeWith,
  one,
  RBAC_KINDS,
  ROOT,
  renderBase,
  renderOverlay,
  kubectlSkip as skip,
} from './support.ts';

const AGENT_SUBJECTS = [{ kind: 'ServiceAccount', name: 'node-problem-detector', namespace: 'kube-system' }];

describe('deploy/ kustomize: RBAC', { skip }, () => {
  const base = skip ? [] : renderBase();
  const overlay = skip ? [] : renderOverlay();

  test('the ClusterRole grants exactly the least-privilege rules, bound only to the agent ServiceAccount', () => {
    for (const docs of [base, overlay]) {
      const role = one(docs, 'ClusterRole');
      assert.equal(role.metadata.name, 'node-problem-detector');
      assert.deepEqual(role.rules, EXPECTED_RULES);
      assert.deepEqual(
        docs
          .filter((d) => RBAC_KINDS.has(d.kind))
          .map((d) => d.kind)
          .sort(),
        ['ClusterRole', 'ClusterRoleBinding'],
        'no other RBAC objects',
      );
      const binding = one(docs, 'ClusterRoleBinding');
      assert.deepEqual(binding.roleRef, {
        apiGroup: 'rbac.authorization.k8s.io',
        kind: 'ClusterRole',
        name: 'node-problem-detector',
      });
      assert.deepEqual(binding.subjects, AGENT_SUBJECTS);
      const sa = one(docs, 'ServiceAccount');
      assert.equal(sa.metadata.name, 'node-problem-detector');
      assert.equal(
        get(one(docs, 'DaemonSet'), 'spec.template.spec.serviceAccountName'),
        'node-problem-detector',
      );
    }
  });

  test('deploy/base/clusterrole.yaml itself holds exactly those rules', () => {
    const doc = parseAllDocuments(readFileSync(join(ROOT, 'deploy/base/clusterrole.yaml'), 'utf8'));
    assert.equal(doc.length, 1);
    assert.deepEqual((doc[0]!.toJS() as Doc).rules, EXPECTED_RULES);
  });

  test('the taint component adds only `patch nodes`, bound to the same ServiceAccount', { skip }, () => {
    const docs = kustomizeWith(['taint']);
    const extra = docs.filter(
      (d) => RBAC_KINDS.has(d.kind) && d.metadata.name === 'node-problem-detector-taint',
    );
    assert.deepEqual(extra.map((d) => d.kind).sort(), ['ClusterRole', 'ClusterRoleBinding']);
    const role = one(docs, 'ClusterRole', 'node-problem-detector-taint');
    assert.deepEqual(role.rules, [{ apiGroups: [''], resources: ['nodes'], verbs: ['patch'] }]);
    const binding = one(docs, 'ClusterRoleBinding', 'node-problem-detector-taint');
    assert.deepEqual(binding.subjects, AGENT_SUBJECTS);
    assert.deepEqual(
      one(docs, 'ClusterRole', 'node-problem-detector').rules,
      EXPECTED_RULES,
      'base role unchanged',
    );
  });

  test('the diagnostics component adds the CRD, its own role (list and expire requests, patch status), --diagnostics and its key file', {
    skip,
  }, () => {
    const docs = kustomizeWith(['diagnostics']);
    const crd = one(docs, 'CustomResourceDefinition', 'nodediagnostics.node-problem-detector.io');
    assert.equal(get(crd, 'spec.scope'), 'Cluster');
    const role = one(docs, 'ClusterRole', 'node-problem-detector-diagnostics');
    assert.deepEqual(role.rules, [
      {
        apiGroups: ['node-problem-detector.io'],
        resources: ['nodediagnostics'],
        verbs: ['list', 'delete'],
      },
      {
        apiGroups: ['node-problem-detector.io'],
        resources: ['nodediagnostics/status'],
        verbs: ['patch'],
      },
    ]);
    const binding = one(docs, 'ClusterRoleBinding', 'node-problem-detector-diagnostics');
    assert.deepEqual(binding.subjects, AGENT_SUBJECTS);
    const ds = one(docs, 'DaemonSet');
    const args = get(ds, 'spec.template.spec.containers.0.args') as string[];
    assert.ok(args.includes('--diagnostics'), args.join(' '));
    // The upload key outlives a container restart but never reaches the node's disk: /tmp is a memory emptyDir.
    assert.ok(args.includes('--diagnostics-key-file=/tmp/diagnostics-key.pem'), args.join(' '));
    const mounts = get(ds, 'spec.template.spec.containers.0.volumeMounts') as {
      name: string;
      mountPath: string;
    }[];
    const tmp = mounts.find((m) => m.mountPath === '/tmp');
    const volumes = get(ds, 'spec.template.spec.volumes') as {
      name: string;
      emptyDir?: { medium?: string };
    }[];
    assert.equal(volumes.find((v) => v.name === tmp?.name)?.emptyDir?.medium, 'Memory');
    assert.deepEqual(
      one(docs, 'ClusterRole', 'node-problem-detector').rules,
      EXPECTED_RULES,
      'base role unchanged',
    );
  });
});
