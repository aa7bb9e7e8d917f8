// What the community chart offers that users set, rendered here with the real helm: Service
// annotations for annotation-based scraping, ServiceMonitor attachMetadata and metricRelabelings,
// dnsPolicy/dnsConfig, extra and init containers, extra ClusterRole rules and DaemonSet labels.
// The defaults render none of them (agreement.test.ts: the defaults equal deploy/base).
//   node --import tsx --test test/helm/community-features.test.ts
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { type Doc, one, podSpec } from '../deploy/support.ts';
import { helmTemplate, helmTemplateResult, toolsOrSkip } from './support.ts';

const { tools, skip } = await toolsOrSkip();

const spec = (d: Doc) => d.spec as Record<string, unknown>;

describe('community chart features', { skip }, () => {
  test('Service prometheus.io annotations (templated) and ServiceMonitor attachMetadata, metricRelabelings', async () => {
    const drop = { action: 'drop', sourceLabels: ['__name__'], regex: 'process_.*' };
    const docs = await helmTemplate(tools!, {
      metrics: {
        service: {
          enabled: true,
          annotations: {
            'prometheus.io/scrape': 'true',
            'prometheus.io/port': '{{ .Values.ports.metrics }}',
          },
        },
        serviceMonitor: { enabled: true, attachMetadata: { node: true }, metricRelabelings: [drop] },
      },
    });
    const svc = one(docs, 'Service').metadata as { annotations?: Record<string, string> };
    assert.deepEqual(svc.annotations, { 'prometheus.io/scrape': 'true', 'prometheus.io/port': '20257' });
    const sm = spec(one(docs, 'ServiceMonitor'));
    assert.deepEqual(sm.attachMetadata, { node: true });
    assert.deepEqual((sm.endpoints as { metricRelabelings?: object[] }[])[0]?.metricRelabelings, [drop]);
  });

  test('dnsPolicy and dnsConfig, extra and init containers, DaemonSet labels, extra ClusterRole rules', async () => {
    const sidecar = { name: 'sidecar', image: 'busybox:1.36', args: ['sleep', 'infinity'] };
    const init = { name: 'init', image: 'busybox:1.36', args: ['true'] };
    const rule = { apiGroups: [''], resources: ['pods'], verbs: ['list'] };
    const docs = await helmTemplate(tools!, {
      dnsPolicy: 'None',
      dnsConfig: { nameservers: ['10.0.0.10'] },
      extraContainers: [sidecar],
      initContainers: [init],
      daemonSetLabels: { team: 'sre' },
      rbac: { clusterRole: { extraRules: [rule] } },
    });
    const ds = one(docs, 'DaemonSet');
    const pod = podSpec(ds);
    assert.equal(pod.dnsPolicy, 'None');
    assert.deepEqual(pod.dnsConfig, { nameservers: ['10.0.0.10'] });
    assert.deepEqual(
      pod.containers.map((c) => c.name),
      ['node-problem-detector', 'sidecar'],
    );
    assert.deepEqual(pod.initContainers, [init]);
    assert.equal(ds.metadata.labels?.team, 'sre');
    assert.equal((podSpec(ds) as { labels?: object }).labels, undefined);
    const role = one(docs, 'ClusterRole', 'node-problem-detector') as unknown as { rules: object[] };
    assert.deepEqual(role.rules.at(-1), rule);
    const hostNet = podSpec(one(await helmTemplate(tools!, { hostNetwork: true }), 'DaemonSet'));
    assert.equal(hostNet.dnsPolicy, 'ClusterFirstWithHostNet', 'the host-network default stays');
  });

  test('control: a dnsPolicy Kubernetes does not have fails the install', async () => {
    const r = await helmTemplateResult(tools!, { dnsPolicy: 'ClusterLast' });
    assert.notEqual(r.code, 0);
    assert.match(r.stderr, /dnsPolicy/);
  });
});
