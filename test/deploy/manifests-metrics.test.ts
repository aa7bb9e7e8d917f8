// Client-side checks of the metrics component in the example overlay: the Service and ServiceMonitor
// select the agent pods and the metrics port, and the PrometheusRule alerts use metrics the agent
// registers. (The API server checks only their apiVersion, kind and metadata: server-dry-run.test.ts.)
//   node --import tsx --test test/deploy/manifests-metrics.test.ts
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import {
  agentContainer,
  get,
  type Obj,
  one,
  registeredMetricNames,
  renderOverlay,
  kubectlSkip as skip,
} from './support.ts';

/** Metrics that some alert must watch. */
const ALERTED = [
  'npd_condition_problem',
  'problem_counter',
  'npd_condition_sync_total',
  'npd_monitor_healthy',
  'npd_events_dropped_total',
];

describe('deploy/ kustomize: metrics component', { skip }, () => {
  const overlay = skip ? [] : renderOverlay();

  test('metrics component: Service and ServiceMonitor select the agent pods and the metrics port', () => {
    const ds = one(overlay, 'DaemonSet');
    const podLabels = get(ds, 'spec.template.metadata.labels') as Record<string, string>;
    const svc = one(overlay, 'Service');
    for (const [k, v] of Object.entries(get(svc, 'spec.selector') as Record<string, string>))
      assert.equal(podLabels[k], v);
    assert.equal(get(svc, 'spec.clusterIP'), 'None');
    assert.equal(get(svc, 'spec.publishNotReadyAddresses'), true);
    const ports = get(svc, 'spec.ports') as { name: string; port: number; targetPort: string }[];
    assert.deepEqual(
      ports.map((p) => [p.name, p.port, p.targetPort]),
      [['metrics', 20257, 'metrics']],
    );
    assert.ok(agentContainer(ds).ports.some((p) => p.name === 'metrics'));
    const sm = one(overlay, 'ServiceMonitor');
    assert.equal(sm.apiVersion, 'monitoring.coreos.com/v1');
    const svcLabels = svc.metadata.labels ?? {};
    for (const [k, v] of Object.entries(get(sm, 'spec.selector.matchLabels') as Record<string, string>)) {
      assert.equal(svcLabels[k], v, `Service carries ${k}`);
    }
    const endpoints = get(sm, 'spec.endpoints') as { port: string; relabelings: Obj[] }[];
    assert.deepEqual(
      endpoints.map((e) => e.port),
      ['metrics'],
    );
    assert.ok(
      endpoints[0]!.relabelings.some((r) => r.targetLabel === 'node'),
      'adds the node label',
    );
    // The up{job=...} alert relies on the job label coming from this Service label.
    assert.equal(svcLabels[get(sm, 'spec.jobLabel') as string], 'node-problem-detector');
  });

  test('metrics component: alerts use metrics the agent registers', () => {
    const rule = one(overlay, 'PrometheusRule');
    assert.equal(rule.apiVersion, 'monitoring.coreos.com/v1');
    const known = registeredMetricNames();
    assert.ok(known.has('problem_counter') && known.has('problem_gauge'), 'metric scan works');
    const groups = get(rule, 'spec.groups') as {
      name: string;
      rules: { alert: string; expr: string; for?: string; labels: Obj }[];
    }[];
    const alerts = groups.flatMap((g) => g.rules);
    const used = new Set<string>();
    for (const a of alerts) {
      assert.match(a.alert, /^[A-Z][A-Za-z0-9]+$/);
      assert.ok(['info', 'warning', 'critical'].includes(a.labels.severity as string), `${a.alert} severity`);
      for (const m of a.expr.matchAll(/\b((?:npd|problem)_[a-z0-9_]+)\b/g)) {
        assert.ok(known.has(m[1]!), `${a.alert}: ${m[1]} is not a metric registered in src/`);
        used.add(m[1]!);
      }
    }
    for (const m of ALERTED) assert.ok(used.has(m), `an alert on ${m}`);
  });
});
