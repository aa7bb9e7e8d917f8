// The end-to-end control plane itself: a real kube-apiserver + etcd (test/e2e/controlplane/build.sh),
// the agent's RBAC from deploy/base/clusterrole.yaml, the audit log and an apiserver outage.
//   node --import tsx --test test/e2e/controlplane.test.ts
// The first run builds the binaries (10-25 min on 2 cores); later runs start in a few seconds.
import assert from 'node:assert/strict';
import * as fs from 'node:fs';
import { after, afterEach, before, describe, test } from 'node:test';
import {
  AGENT_USER,
  type ControlPlane,
  DEFAULT_NODE_NAME,
  processGroupAlive,
  startControlPlane,
} from './harness/controlplane.ts';

describe('e2e control plane (kube-apiserver + etcd)', () => {
  let cp: ControlPlane;

  before(
    async () => {
      cp = await startControlPlane();
    },
    { timeout: 60 * 60_000 },
  );

  let anyFailed = false;
  afterEach((t) => {
    // TestContext.passed exists since Node 21.7 but is missing from @types/node's declarations.
    if ((t as { passed?: boolean }).passed === false) {
      anyFailed = true;
      cp?.markFailed();
    }
  });

  after(async () => {
    await cp?.stop();
  });

  test('/version tells the version that was built', async () => {
    const r = await cp.request('GET', '/version');
    assert.equal(r.status, 200, r.text);
    const v = r.json as { gitVersion?: string; major?: string; minor?: string };
    assert.equal(v.gitVersion, cp.binaries.kubernetesVersion);
    assert.match(cp.binaries.kubernetesVersion, /^v1\.\d+\.\d+$/);
    assert.equal(`v${v.major}.${v.minor}`, cp.binaries.kubernetesVersion.split('.').slice(0, 2).join('.'));
  });

  test('admin kubectl sees the Node', async () => {
    assert.equal(cp.nodeName, DEFAULT_NODE_NAME);
    const out = await cp.kubectl(['get', 'node', cp.nodeName, '-o', 'json']);
    const node = JSON.parse(out) as {
      metadata: { name: string; uid: string };
      status?: { conditions?: { type: string; status: string }[] };
    };
    assert.equal(node.metadata.name, cp.nodeName);
    assert.equal(node.metadata.uid, cp.nodeUid);
    assert.ok(node.status?.conditions?.some((c) => c.type === 'Ready' && c.status === 'True'));
  });

  test('the agent identity has exactly the ClusterRole of deploy/base/clusterrole.yaml', async () => {
    assert.equal(cp.clusterRoleName, 'node-problem-detector');
    const canI = async (...args: string[]) => {
      const r = await cp.kubectlResult(['auth', 'can-i', ...args], { kubeconfig: cp.agentKubeconfig });
      return r.stdout.trim();
    };
    assert.equal(await canI('get', `nodes/${cp.nodeName}`), 'yes');
    assert.equal(await canI('patch', 'nodes', '--subresource=status'), 'yes');
    assert.equal(await canI('create', 'events'), 'yes');
    assert.equal(await canI('patch', 'events', '-n', 'default'), 'yes');
    assert.equal(await canI('create', 'events.events.k8s.io'), 'yes');
    assert.equal(await canI('patch', 'events.events.k8s.io', '-n', 'default'), 'yes');
    // No sink replaces an event (series updates are PATCHes): update was dropped from the role.
    assert.equal(await canI('update', 'events.events.k8s.io', '-n', 'default'), 'no');
    assert.equal(await canI('list', 'pods'), 'no');
    assert.equal(await canI('list', 'nodes'), 'no');
    assert.equal(await canI('patch', 'nodes'), 'no');
    assert.equal(await canI('delete', 'nodes'), 'no');
    assert.equal(await canI('get', 'secrets', '-n', 'kube-system'), 'no');

    // And for real: get works, list pods is 403.
    const got = await cp.kubectl(['get', 'node', cp.nodeName, '-o', 'name'], {
      kubeconfig: cp.agentKubeconfig,
    });
    assert.equal(got.trim(), `node/${cp.nodeName}`);
    const pods = await cp.kubectlResult(['get', 'pods', '-A'], { kubeconfig: cp.agentKubeconfig });
    assert.notEqual(pods.code, 0);
    assert.match(pods.stderr, /forbidden/i);
    const raw = await cp.request('GET', '/api/v1/pods', { token: cp.agentToken });
    assert.equal(raw.status, 403);
  });

  test('agent writes show up in the audit log', async () => {
    const mark = cp.auditMark();
    // As the agent does it: a strategic-merge PATCH of nodes/status, no GET of nodes/status (the
    // ClusterRole does not grant it, so `kubectl patch --subresource=status` would be refused).
    const now = new Date().toISOString().replace(/\.\d+Z$/, 'Z');
    const patched = await cp.request('PATCH', `/api/v1/nodes/${cp.nodeName}/status`, {
      token: cp.agentToken,
      body: {
        status: {
          conditions: [
            {
              type: 'NPDE2EHarness',
              status: 'False',
              reason: 'HarnessCheck',
              message: 'written by controlplane.test.ts',
              lastHeartbeatTime: now,
              lastTransitionTime: now,
            },
          ],
        },
      },
    });
    assert.equal(patched.status, 200, patched.text);
    const created = await cp.request('POST', '/api/v1/namespaces/default/events', {
      token: cp.agentToken,
      body: {
        apiVersion: 'v1',
        kind: 'Event',
        metadata: { generateName: `${cp.nodeName}.` },
        involvedObject: { apiVersion: 'v1', kind: 'Node', name: cp.nodeName, uid: cp.nodeName },
        reason: 'HarnessCheck',
        message: 'written by controlplane.test.ts',
        type: 'Normal',
        source: { component: 'npd-e2e', host: cp.nodeName },
        count: 1,
      },
    });
    assert.equal(created.status, 201, created.text);

    const statusPatches = { verb: 'patch', resource: 'nodes', subresource: 'status', user: AGENT_USER };
    assert.equal(await cp.waitForAudit(statusPatches, mark, 1), 1);
    const eventCreates = { verb: 'create', resource: 'events', apiGroup: '', user: AGENT_USER, code: 201 };
    assert.equal(await cp.waitForAudit(eventCreates, mark, 1), 1);
    // The agent's 403 on pods was before the mark; reads of the node by kubectl's patch are gets.
    assert.equal(cp.countAudit({ verb: 'list', resource: 'pods' }, mark), 0);
    assert.equal(cp.countAudit({ verb: 'patch', resource: 'nodes', subresource: null }, mark), 0);

    const out = await cp.kubectl([
      'get',
      'node',
      cp.nodeName,
      '-o',
      'jsonpath={.status.conditions[?(@.type=="NPDE2EHarness")].reason}',
    ]);
    assert.equal(out, 'HarnessCheck');
  });

  test('kube-apiserver restarts on the same port and keeps etcd data', async () => {
    const before = cp.pids();
    assert.ok(before.apiserver && before.etcd);
    const mark = cp.auditMark();
    assert.ok(mark.offset > 0);
    await cp.stopApiserver();
    assert.equal(cp.pids().apiserver, undefined);
    await assert.rejects(cp.request('GET', '/readyz', { timeoutMs: 2000 }), /ECONNREFUSED/);
    await cp.startApiserver();
    const after = cp.pids();
    assert.ok(after.apiserver && after.apiserver !== before.apiserver);
    assert.equal(after.etcd, before.etcd);
    const r = await cp.request('GET', `/api/v1/nodes/${cp.nodeName}`);
    assert.equal(r.status, 200, r.text);
    assert.equal((r.json as { metadata: { uid: string } }).metadata.uid, cp.nodeUid);
    // Same tokens still valid.
    const got = await cp.kubectl(['get', 'node', cp.nodeName, '-o', 'name'], {
      kubeconfig: cp.agentKubeconfig,
    });
    assert.equal(got.trim(), `node/${cp.nodeName}`);
    // The restarted apiserver appends to the same audit log, so marks taken before stay valid.
    const agentGets = { verb: 'get', resource: 'nodes', subresource: null, user: AGENT_USER };
    assert.equal(await cp.waitForAudit(agentGets, mark, 1), 1);
  });

  test('stop() leaves no process and no folder behind', async () => {
    const pids = cp.pids();
    const dir = cp.workDir;
    const keep = process.env.NPD_E2E_KEEP === '1';
    await cp.stop();
    for (const pid of [pids.etcd, pids.apiserver]) {
      assert.ok(pid);
      // Not even a zombie once init reaps them, but that can take a second here.
      assert.equal(processGroupAlive(pid), false, `process group ${pid} still running`);
    }
    assert.equal(fs.existsSync(dir), keep || anyFailed);
  });
});
