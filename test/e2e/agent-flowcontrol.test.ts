// API Priority and Fairness (issue 39 §7), on the real kube-apiserver with APF on as shipped: the
// opt-in deploy/components/flow-control classifies the agent's own requests (a real ServiceAccount
// token) into a priority level of its own, which the API server's APF response headers and its
// flowcontrol metrics show; and under that level's 429s the agent backs off and converges once they end.
import assert from 'node:assert/strict';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { holdWebhook } from './apf-hold.ts';
import { type ControlPlane, REPO_ROOT, startControlPlane } from './harness/controlplane.ts';
import {
  type AgentProcess,
  agentArgs,
  kmsg,
  metricValue,
  nodeConditions,
  shippedRules,
  startAgent,
  waitFor,
  workDir,
} from './support.ts';

const NS = 'kube-system';
const SA = 'node-problem-detector';
const COMPONENT = join(REPO_ROOT, 'deploy/components/flow-control');
const FLOWCONTROL = '/apis/flowcontrol.apiserver.k8s.io/v1';

describe('the flow-control component on a real API server', () => {
  let cp: ControlPlane;
  let token: string;
  let kubeconfig: string;
  let agent: AgentProcess | undefined;
  const dir = workDir();
  const pid = String(Math.floor(Math.random() * 900_000) + 100_000);

  before(
    async () => {
      cp = await startControlPlane();
      await must('POST', `/api/v1/namespaces/${NS}/serviceaccounts`, { metadata: { name: SA } });
      await must('POST', '/apis/rbac.authorization.k8s.io/v1/clusterrolebindings', {
        metadata: { name: 'npd-e2e-flowcontrol' },
        roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'ClusterRole', name: cp.clusterRoleName },
        subjects: [{ kind: 'ServiceAccount', name: SA, namespace: NS }],
      });
      token = await serviceAccountToken();
      kubeconfig = saKubeconfig();
    },
    { timeout: 60 * 60_000 },
  );

  after(async () => {
    const code = await agent?.stop();
    await cp?.stop({ failed: code !== undefined && code !== 0 });
  });

  async function must(method: string, path: string, body?: unknown): Promise<unknown> {
    const r = await cp.request(method, path, { body });
    assert.ok([200, 201].includes(r.status), `${method} ${path}: ${r.status} ${r.text}`);
    return r.json;
  }

  async function serviceAccountToken(): Promise<string> {
    const tr = (await must('POST', `/api/v1/namespaces/${NS}/serviceaccounts/${SA}/token`, {
      apiVersion: 'authentication.k8s.io/v1',
      kind: 'TokenRequest',
      spec: { audiences: [], expirationSeconds: 3600 },
    })) as { status: { token: string } };
    return tr.status.token;
  }

  /** The agent's kubeconfig with the ServiceAccount's token in place of the harness's static user. */
  function saKubeconfig(): string {
    const file = join(dir, 'sa.kubeconfig');
    const config = {
      apiVersion: 'v1',
      kind: 'Config',
      clusters: [{ name: 'e2e', cluster: { server: cp.url, 'certificate-authority': cp.caFile } }],
      users: [{ name: SA, user: { token } }],
      contexts: [{ name: 'e2e', context: { cluster: 'e2e', user: SA } }],
      'current-context': 'e2e',
    };
    writeFileSync(file, JSON.stringify(config));
    return file;
  }

  /** The FlowSchema uid APF classified the ServiceAccount's GET of its Node into, and the status. */
  async function classified(): Promise<{ status: number; flowSchemaUid: unknown; retryAfter: unknown }> {
    const r = await cp.request('GET', `/api/v1/nodes/${cp.nodeName}`, { token });
    return {
      status: r.status,
      flowSchemaUid: r.headers?.['x-kubernetes-pf-flowschema-uid'],
      retryAfter: r.headers?.['retry-after'],
    };
  }

  const uidOf = async (kind: string, name: string) =>
    ((await must('GET', `${FLOWCONTROL}/${kind}/${name}`)) as { metadata: { uid: string } }).metadata.uid;

  /** One series of the API server's own /metrics (admin token), summed over any other labels. */
  async function apiserverMetric(name: string, labels: Record<string, string>): Promise<number> {
    const text = (await cp.request('GET', '/metrics')).text;
    const want = Object.entries(labels).map(([k, v]) => `${k}="${v}"`);
    return text
      .split('\n')
      .filter((l) => l.startsWith(`${name}{`) && want.every((w) => l.includes(w)))
      .reduce((sum, l) => sum + Number(l.slice(l.lastIndexOf(' ') + 1)), 0);
  }

  test('control: without the component the agent shares kube-system-service-accounts', async () => {
    const r = await classified();
    assert.equal(r.status, 200);
    assert.equal(r.flowSchemaUid, await uidOf('flowschemas', 'kube-system-service-accounts'));
  });

  test('with the component the agent’s requests are its own FlowSchema’s', async () => {
    await cp.kubectl(['apply', '--server-side', '-f', join(COMPONENT, 'prioritylevel.yaml')]);
    await cp.kubectl(['apply', '--server-side', '-f', join(COMPONENT, 'flowschema.yaml')]);
    const ours = await uidOf('flowschemas', SA);
    await waitFor(async () => (await classified()).flowSchemaUid === ours, 30_000);

    const configs = [shippedRules(dir, 'kernel.yaml'), shippedRules(dir, 'readonly.yaml')];
    agent = await startAgent(agentArgs(kubeconfig, cp.nodeName, configs), { KUBECONFIG: '' });
    kmsg(`Watchdog detected hard LOCKUP on cpu ${pid.slice(0, 2)}`);
    await waitFor(
      async () => (await nodeConditions(cp)).some((c) => c.type === 'KernelDeadlock' && c.status === 'True'),
      30_000,
      agent.output,
    );
    // The agent's own status patch and events went through the level, not just the test's GETs.
    const user = `system:serviceaccount:${NS}:${SA}`;
    assert.ok(cp.countAudit({ verb: 'patch', resource: 'nodes', subresource: 'status', user }) >= 1);
    const dispatched = await apiserverMetric('apiserver_flowcontrol_dispatched_requests_total', {
      flow_schema: SA,
      priority_level: SA,
    });
    assert.ok(dispatched >= 3, `dispatched through node-problem-detector: ${dispatched}`);
  });

  test('throttled by its level (429), the agent backs off and converges when it lifts', async (t) => {
    assert.ok(agent, 'the previous test started the agent');
    // No seats: APF still dispatches a request when none of the level's is executing, so requests held
    // by a slow webhook keep the level busy (apf-hold.ts); every other request of it is then rejected.
    await setLevel({ nominalConcurrencyShares: 0, lendablePercent: 0, borrowingLimitPercent: 0 }, 'Reject');
    const hold = await holdWebhook(cp, dir, token, 10_000);
    hold.start(2);
    const rejections: unknown[] = [];
    try {
      await waitFor(async () => {
        const r = await classified();
        if (r.status === 429) rejections.push(r.retryAfter);
        return rejections.length > 0;
      }, 30_000);
      assert.ok(
        rejections.every((h) => h !== undefined),
        'every APF rejection carries Retry-After',
      );

      const series = 'npd_apiserver_requests_total{verb="PATCH",resource="nodes/status",code="429"}';
      const before = (await metricValue(agent.metricsUrl, series)) ?? 0;
      const started = Date.now();
      kmsg(`EXT4-fs (sdz${pid.slice(0, 1)}): Remounting filesystem read-only`);
      try {
        await waitFor(async () => ((await metricValue(agent!.metricsUrl, series)) ?? 0) > before, 60_000);
      } catch (err) {
        const text = await (await fetch(agent.metricsUrl)).text();
        const lines = text.split('\n').filter((l) => l.startsWith('npd_apiserver_requests_total'));
        const ro = (await nodeConditions(cp)).find((c) => c.type === 'ReadonlyFilesystem');
        throw new Error(`${String(err)}\n${lines.join('\n')}\nNode: ${JSON.stringify(ro)}`);
      }
      await new Promise((r) => setTimeout(r, 20_000));
      const throttled = ((await metricValue(agent.metricsUrl, series)) ?? 0) - before;
      const seconds = (Date.now() - started) / 1000;
      t.diagnostic(
        `${throttled} status patches rejected in ${seconds.toFixed(0)} s; the test's ${rejections.length}`,
      );
      // The condition manager waits RESYNC_PERIOD_MS (10 s) after a failed sync and skips its quick
      // retries when the answer carries Retry-After: one attempt per 10 s (and the first), no tight loop.
      assert.ok(throttled <= Math.ceil(seconds / 10) + 1, `${throttled} patches in ${seconds} s`);
      assert.ok((await fetch(`${agent.statusUrl}/healthz`)).ok, 'the agent lives on');
    } finally {
      await hold.stop();
    }
    await setLevel({ nominalConcurrencyShares: 10, lendablePercent: 50 }, 'Queue');
    await waitFor(
      async () =>
        (await nodeConditions(cp)).some((c) => c.type === 'ReadonlyFilesystem' && c.status === 'True'),
      60_000,
      agent.output,
    );
    // The Warning event of the change was refused too while throttled: the recorder's retries land it.
    await waitFor(
      async () =>
        (
          await cp.kubectl([
            'get',
            'events',
            '-n',
            'default',
            '--field-selector',
            'reason=FilesystemIsReadOnly',
          ])
        ).includes('FilesystemIsReadOnly'),
      60_000,
      agent.output,
    );
  });

  async function setLevel(limited: Record<string, number>, response: 'Reject' | 'Queue'): Promise<void> {
    const limitResponse =
      response === 'Reject'
        ? { type: 'Reject', queuing: null }
        : { type: 'Queue', queuing: { queues: 16, handSize: 4, queueLengthLimit: 50 } };
    const r = await cp.request('PATCH', `${FLOWCONTROL}/prioritylevelconfigurations/${SA}`, {
      contentType: 'application/merge-patch+json',
      body: { spec: { limited: { ...limited, limitResponse } } },
    });
    assert.equal(r.status, 200, r.text);
  }
});
