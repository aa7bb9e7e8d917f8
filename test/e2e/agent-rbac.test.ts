// Least privilege: the shipped ClusterRole is enough, and one verb fewer fails visibly.
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { type ControlPlane, startControlPlane } from './harness/controlplane.ts';
import { agentArgs, metricValue, shippedRules, startAgent, waitFor, workDir } from './support.ts';

let cp: ControlPlane;

before(
  async () => {
    cp = await startControlPlane();
  },
  { timeout: 60 * 60_000 },
);

after(async () => {
  await cp?.stop();
});

test('without nodes/status patch the agent reports sync failures in a metric and its log', {
  timeout: 120_000,
}, async () => {
  const role = {
    apiVersion: 'rbac.authorization.k8s.io/v1',
    kind: 'ClusterRole',
    metadata: { name: 'npd-missing-status-patch' },
    rules: [
      { apiGroups: [''], resources: ['nodes'], verbs: ['get'] },
      { apiGroups: ['', 'events.k8s.io'], resources: ['events'], verbs: ['create', 'patch', 'update'] },
    ],
  };
  const created = await cp.request('POST', '/apis/rbac.authorization.k8s.io/v1/clusterroles', { body: role });
  assert.equal(created.status, 201, created.text);
  const kubeconfig = await cp.writeKubeconfig('npd-agent-weak', { clusterRole: role.metadata.name });
  const agent = await startAgent(
    agentArgs(kubeconfig, cp.nodeName, [shippedRules(workDir(), 'kernel.yaml')]),
    { KUBECONFIG: '' },
  );
  try {
    const failures = 'npd_condition_sync_total{result="failure"}';
    await waitFor(
      async () => ((await metricValue(agent.metricsUrl, failures)) ?? 0) > 0,
      30_000,
      agent.output,
    );
    assert.match(agent.output(), /403|forbidden/i);
    const ready = await fetch(`${agent.statusUrl}/readyz`);
    assert.equal(ready.status, 503, '/readyz reports that node sync is not working');
    assert.ok(cp.countAudit({ user: 'npd-agent-weak', code: 403 }) > 0);
  } finally {
    await agent.stop();
  }
});
