// Each agent may write only about its own node: the ValidatingAdmissionPolicies in deploy/ check the
// node name the API server puts in the user's extra info for a ServiceAccount token bound to a Pod on
// a node. Proven on the real kube-apiserver: a TokenRequest bound to a Pod with spec.nodeName gives
// the same claim the kubelet's projected token carries.
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { after, before, test } from 'node:test';
import { KEY_ANNOTATION, newUploadKey } from '../../src/diagnostics/sealed-url.ts';
import { type ControlPlane, REPO_ROOT, startControlPlane } from './harness/controlplane.ts';

const NS = 'kube-system';
const SA = 'node-problem-detector';
const OTHER = 'npd-e2e-other-node';
const POLICIES = [
  join(REPO_ROOT, 'deploy/base/node-binding-policy.yaml'),
  join(REPO_ROOT, 'deploy/components/diagnostics/crd.yaml'),
  join(REPO_ROOT, 'deploy/components/diagnostics/node-binding-policy.yaml'),
];

let cp: ControlPlane;
let onNode: string;
let unbound: string;

async function must(method: string, path: string, body: unknown, ok = [200, 201]): Promise<unknown> {
  const r = await cp.request(method, path, { body });
  assert.ok(ok.includes(r.status), `${method} ${path}: ${r.status} ${r.text}`);
  return JSON.parse(r.text || '{}');
}

async function tokenFor(boundPod?: { name: string; uid: string }): Promise<string> {
  const spec = {
    audiences: [],
    expirationSeconds: 3600,
    ...(boundPod ? { boundObjectRef: { apiVersion: 'v1', kind: 'Pod', ...boundPod } } : {}),
  };
  const tr = (await must('POST', `/api/v1/namespaces/${NS}/serviceaccounts/${SA}/token`, {
    apiVersion: 'authentication.k8s.io/v1',
    kind: 'TokenRequest',
    spec,
  })) as { status: { token: string } };
  return tr.status.token;
}

before(
  async () => {
    cp = await startControlPlane();
    await cp.kubectl(['apply', ...POLICIES.flatMap((f) => ['-f', f])]);
    await must('POST', '/api/v1/nodes', { apiVersion: 'v1', kind: 'Node', metadata: { name: OTHER } });
    await must('POST', `/api/v1/namespaces/${NS}/serviceaccounts`, { metadata: { name: SA } });
    // The agent's real role, from the manifests, bound to the ServiceAccount.
    await cp.kubectl(['apply', '-f', join(REPO_ROOT, 'deploy/base/clusterrole.yaml')]);
    await cp.kubectl(['apply', '-f', join(REPO_ROOT, 'deploy/components/diagnostics/rbac.yaml')]);
    await must('POST', '/apis/rbac.authorization.k8s.io/v1/clusterrolebindings', {
      metadata: { name: 'npd-e2e-sa' },
      roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'ClusterRole', name: 'node-problem-detector' },
      subjects: [{ kind: 'ServiceAccount', name: SA, namespace: NS }],
    });
    const pod = (await must('POST', `/api/v1/namespaces/${NS}/pods`, {
      metadata: { name: 'npd-e2e-agent' },
      spec: {
        nodeName: cp.nodeName,
        serviceAccountName: SA,
        automountServiceAccountToken: false,
        containers: [{ name: 'agent', image: 'npd:e2e' }],
      },
    })) as { metadata: { name: string; uid: string } };
    onNode = await tokenFor({ name: pod.metadata.name, uid: pod.metadata.uid });
    unbound = await tokenFor();
    // Policies take effect once the API server has loaded them.
    const deadline = Date.now() + 30_000;
    while (Date.now() < deadline && (await patchNodeStatus(OTHER, onNode)) !== 403)
      await new Promise((r) => setTimeout(r, 250));
  },
  { timeout: 60 * 60_000 },
);

after(async () => {
  await cp?.stop();
});

async function patchNodeStatus(node: string, token: string): Promise<number> {
  const condition = { type: 'NpdE2eBinding', status: 'False', reason: 'E2e', message: 'test' };
  const r = await cp.request('PATCH', `/api/v1/nodes/${node}/status`, {
    token,
    contentType: 'application/strategic-merge-patch+json',
    body: { status: { conditions: [condition] } },
  });
  return r.status;
}

function event(node: string, name: string): unknown {
  return {
    metadata: { name, namespace: 'default' },
    involvedObject: { kind: 'Node', name: node, uid: node },
    reason: 'E2eBinding',
    message: 'test',
    type: 'Warning',
    source: { component: 'kernel-monitor', host: node },
  };
}

test('nodes/status: its own node is patched, another node is refused', async () => {
  assert.equal(await patchNodeStatus(cp.nodeName, onNode), 200);
  const other = await cp.request('PATCH', `/api/v1/nodes/${OTHER}/status`, {
    token: onNode,
    contentType: 'application/strategic-merge-patch+json',
    body: { status: { conditions: [{ type: 'X', status: 'True' }] } },
  });
  assert.equal(other.status, 403, other.text);
  assert.match(
    other.text,
    new RegExp(`on node ${cp.nodeName} may only write about its own node, not ${OTHER}`),
  );
});

test('a token of the same ServiceAccount that is bound to no node is refused', async () => {
  assert.equal(await patchNodeStatus(cp.nodeName, unbound), 403);
});

test('Events (core and events.k8s.io): about its own node are created, about another node refused', async () => {
  const own = await cp.request('POST', '/api/v1/namespaces/default/events', {
    token: onNode,
    body: event(cp.nodeName, 'own.e2e'),
  });
  assert.equal(own.status, 201, own.text);
  const other = await cp.request('POST', '/api/v1/namespaces/default/events', {
    token: onNode,
    body: event(OTHER, 'other.e2e'),
  });
  assert.equal(other.status, 403, other.text);
  const series = (node: string, name: string) =>
    cp.request('POST', '/apis/events.k8s.io/v1/namespaces/default/events', {
      token: onNode,
      body: {
        metadata: { name, namespace: 'default' },
        regarding: { kind: 'Node', name: node, uid: node },
        reason: 'E2eBinding',
        note: 'test',
        type: 'Warning',
        action: 'Test',
        // MicroTime: six fractional digits.
        eventTime: new Date().toISOString().replace(/\.(\d{3})Z$/, '.$1000Z'),
        reportingController: 'node-problem-detector',
        reportingInstance: 'e2e',
      },
    });
  const ownSeries = await series(cp.nodeName, 'own-series.e2e');
  assert.equal(ownSeries.status, 201, ownSeries.text);
  const otherSeries = await series(OTHER, 'other-series.e2e');
  assert.equal(otherSeries.status, 403, otherSeries.text);
});

test('NodeDiagnostic: its own node status is written and expired, another node is refused', async () => {
  const base = '/apis/node-problem-detector.io/v1alpha1/nodediagnostics';
  for (const [name, node] of [
    ['own-request', cp.nodeName],
    ['other-request', OTHER],
  ])
    await must('POST', base, {
      apiVersion: 'node-problem-detector.io/v1alpha1',
      kind: 'NodeDiagnostic',
      metadata: { name },
      spec: { nodeName: node, uploadURL: 'https://bucket.example/x' },
    });
  const status = (name: string) =>
    cp.request('PATCH', `${base}/${name}/status`, {
      token: onNode,
      contentType: 'application/merge-patch+json',
      body: { status: { phase: 'Running', message: 'collecting' } },
    });
  assert.equal((await status('own-request')).status, 200);
  const denied = await status('other-request');
  assert.equal(denied.status, 403, denied.text);
  const del = (name: string) => cp.request('DELETE', `${base}/${name}`, { token: onNode });
  assert.equal((await del('other-request')).status, 403);
  assert.equal((await del('own-request')).status, 200);
});

test('the diagnostics key annotation: its own node takes it, another node refuses it', async () => {
  // A token that could replace another node's key could read that node's sealed upload URLs.
  const publish = (node: string) =>
    cp.request('PATCH', `/api/v1/nodes/${node}/status`, {
      token: onNode,
      contentType: 'application/strategic-merge-patch+json',
      body: { metadata: { annotations: { [KEY_ANNOTATION]: newUploadKey().annotation } } },
    });
  assert.equal((await publish(cp.nodeName)).status, 200);
  const denied = await publish(OTHER);
  assert.equal(denied.status, 403, denied.text);
  const other = (await must('GET', `/api/v1/nodes/${OTHER}`, undefined)) as {
    metadata: { annotations?: Record<string, string> };
  };
  assert.equal(other.metadata.annotations?.[KEY_ANNOTATION], undefined);
});

test("Event updates: another node's or a Pod's Event is not moved onto its own node; its own is updated", async () => {
  // Issue 38 finding 6: the policy judged an update by the new object only, so a node's token could
  // move any Event in `default` onto its own node and rewrite it.
  const podEvent = {
    metadata: { name: 'pod.e2e', namespace: 'default' },
    involvedObject: { kind: 'Pod', name: 'web-0', namespace: 'default', uid: 'web-0' },
    reason: 'BackOff',
    message: 'Back-off restarting failed container',
    type: 'Warning',
    source: { component: 'kubelet', host: OTHER },
  };
  await must('POST', '/api/v1/namespaces/default/events', event(OTHER, 'other-update.e2e'));
  await must('POST', '/api/v1/namespaces/default/events', podEvent);
  await must('POST', '/api/v1/namespaces/default/events', event(cp.nodeName, 'own-update.e2e'));
  const moveOnto = (name: string, node: string) =>
    cp.request('PATCH', `/api/v1/namespaces/default/events/${name}`, {
      token: onNode,
      contentType: 'application/merge-patch+json',
      body: {
        involvedObject: { kind: 'Node', name: node, uid: node, namespace: null },
        message: 'rewritten',
      },
    });
  const other = await moveOnto('other-update.e2e', cp.nodeName);
  assert.equal(other.status, 403, other.text);
  assert.match(
    other.text,
    new RegExp(`on node ${cp.nodeName} may only change what is about its own node, not ${OTHER}`),
  );
  const pod = await moveOnto('pod.e2e', cp.nodeName);
  assert.equal(pod.status, 403, pod.text);
  assert.match(pod.text, /may only change what is about its own node, not this object/);
  for (const name of ['other-update.e2e', 'pod.e2e']) {
    const kept = (await must('GET', `/api/v1/namespaces/default/events/${name}`, undefined)) as {
      message: string;
    };
    assert.notEqual(kept.message, 'rewritten', `${name} was rewritten`);
  }
  // Negative control: the same update of its own node's Event (the agent's series count) passes.
  const own = await moveOnto('own-update.e2e', cp.nodeName);
  assert.equal(own.status, 200, own.text);
  const ownSeries = await cp.request('PATCH', '/api/v1/namespaces/default/events/own-update.e2e', {
    token: onNode,
    contentType: 'application/merge-patch+json',
    body: { count: 2 },
  });
  assert.equal(ownSeries.status, 200, ownSeries.text);
});
