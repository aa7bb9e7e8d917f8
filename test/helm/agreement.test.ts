// One source of truth: `helm template` of the chart renders the same objects as `kubectl kustomize`
// of deploy/base (+ the metrics and taint components for the matching values), compared as parsed
// objects. What may differ, and nothing else:
// - Helm's bookkeeping labels (helm.sh/chart, managed-by, version, instance), which kustomize lacks;
// - `helm test` pods (hooks), which kustomize has no counterpart for;
// - the content hash of a generated ConfigMap's name (kustomize's and the chart's hash differ; both
//   change with the content, which manifests-config.test.ts and this file's copies check).
// The chart reads rules/, deploy/base/config/ and the metrics component through copies in its files/
// (deploy/sync-rules.sh); a stale copy fails here and in `deploy/sync-rules.sh --check`.
//   node --import tsx --test test/helm/agreement.test.ts
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { describe, test } from 'node:test';
import { type Doc, kubectlSkip, kustomizeWith, ROOT, renderBase } from '../deploy/support.ts';
import { helmTemplate, NAMESPACE, toolsOrSkip } from './support.ts';

const { tools, skip } = await toolsOrSkip();

const HELM_ONLY_LABELS = new Set([
  'helm.sh/chart',
  'app.kubernetes.io/managed-by',
  'app.kubernetes.io/version',
  'app.kubernetes.io/instance',
]);
const HASHED = /^(.*)-[a-z0-9]{10}$/;

/** Strips what may differ (see the header), then sorts by kind, namespace and name. */
export function normalise(all: readonly Doc[]): Doc[] {
  const docs = all.filter((d) => !isHook(d));
  const renames = new Map<string, string>();
  for (const d of docs) {
    const m = d.kind === 'ConfigMap' ? HASHED.exec(d.metadata.name) : null;
    if (m?.[1]) renames.set(d.metadata.name, m[1]);
  }
  const walk = (v: unknown): unknown => {
    if (typeof v === 'string') return renames.get(v) ?? v;
    if (Array.isArray(v)) return v.map(walk);
    if (v && typeof v === 'object') {
      return Object.fromEntries(
        Object.entries(v)
          .filter(([k]) => !HELM_ONLY_LABELS.has(k))
          .map(([k, x]) => [k, walk(x)]),
      );
    }
    return v;
  };
  const key = (d: Doc) => `${d.kind}/${d.metadata.namespace ?? ''}/${d.metadata.name}`;
  return docs
    .map((d) => walk(d) as Doc)
    .map(withoutClusterScopedNamespace)
    .sort((a, b) => key(a).localeCompare(key(b)));
}

/**
 * kustomize's `namespace:` also stamps the admission policies, a kind its schema does not know as
 * cluster-scoped; the API server ignores a namespace on cluster-scoped objects (the server dry run in
 * test/deploy accepts them), the chart writes none.
 */
function withoutClusterScopedNamespace(d: Doc): Doc {
  if (!d.kind.startsWith('ValidatingAdmissionPolicy')) return d;
  const { namespace: _ignored, ...metadata } = d.metadata;
  return { ...d, metadata } as Doc;
}

/** `helm test` and other hooks are Helm's alone: kustomize has no counterpart. */
function isHook(d: Doc): boolean {
  const annotations = (d.metadata as { annotations?: Record<string, string> }).annotations ?? {};
  return 'helm.sh/hook' in annotations;
}

function assertSameObjects(chart: readonly Doc[], kustomize: readonly Doc[]): void {
  const [c, k] = [normalise(chart), normalise(kustomize)];
  const names = (ds: Doc[]) => ds.map((d) => `${d.kind}/${d.metadata.name}`);
  assert.deepEqual(names(c), names(k), 'the chart and kustomize render different objects');
  for (const [i, obj] of c.entries()) {
    assert.deepEqual(obj, k[i], `${obj.kind}/${obj.metadata.name} differs between the chart and kustomize`);
  }
}

const ALL_COMPONENTS = {
  rbac: { taint: true },
  metrics: {
    service: { enabled: true },
    serviceMonitor: { enabled: true },
    prometheusRule: { enabled: true },
    dashboard: { enabled: true },
  },
};

describe('the Helm chart renders what kustomize renders', { skip: skip || kubectlSkip }, () => {
  test('the chart copies of rules/, deploy/base/config and the metrics component are current', () => {
    execFileSync('bash', [join(ROOT, 'deploy/sync-rules.sh'), '--check'], { stdio: 'pipe' });
  });

  test('default values = deploy/base', async () => {
    const chart = await helmTemplate(tools!, {});
    assert.ok(chart.every((d) => d.metadata.namespace === undefined || d.metadata.namespace === NAMESPACE));
    assertSameObjects(chart, renderBase());
  });

  test('metrics, dashboard and taint on = deploy/base + components metrics and taint', async () => {
    assertSameObjects(await helmTemplate(tools!, ALL_COMPONENTS), kustomizeWith(['metrics', 'taint']));
  });

  // The opt-in monitor components, each alone on the base, against the chart's switch for it.
  for (const [component, key] of [
    ['journald', 'journald'],
    ['node-probes', 'nodeProbes'],
    ['gpu', 'gpu'],
    ['diagnostics', 'diagnostics'],
    ['extra-conditions', 'extraConditions'],
    ['pstore', 'pstore'],
    ['flow-control', 'flowControl'],
  ] as const) {
    const absent =
      !existsSync(join(ROOT, 'deploy/components', component)) && `no deploy/components/${component}`;
    test(`${key}.enabled = deploy/base + component ${component}`, { skip: absent }, async () => {
      assertSameObjects(await helmTemplate(tools!, { [key]: { enabled: true } }), kustomizeWith([component]));
    });
  }

  // The gpu component's variants against the gpu values that pick them (docs/install.md, GPU nodes).
  for (const [component, gpu] of [
    ['gpu-runtime-class', { runtimeClassName: 'nvidia' }],
    ['gpu-gke', { driverRoot: '/home/kubernetes/bin/nvidia' }],
    ['gpu-operator', { driverRoot: '/run/nvidia/driver' }],
  ] as const) {
    test(`gpu ${JSON.stringify(gpu)} = deploy/base + component ${component}`, async () => {
      const chart = await helmTemplate(tools!, { gpu: { enabled: true, ...gpu } });
      assertSameObjects(chart, kustomizeWith([component]));
    });
  }

  test('control: a changed value is caught (the comparison is not blind)', async () => {
    const chart = await helmTemplate(tools!, { updateStrategy: { rollingUpdate: { maxUnavailable: 2 } } });
    assert.throws(() => assertSameObjects(chart, renderBase()), /DaemonSet\/node-problem-detector differs/);
    const metricsOnly = await helmTemplate(tools!, { metrics: ALL_COMPONENTS.metrics });
    assert.throws(
      () => assertSameObjects(metricsOnly, kustomizeWith(['metrics', 'taint'])),
      /different objects/,
    );
  });
});
