// The agent against a real kube-apiserver, checked with the real kubectl: conditions, events,
// counting, kubelet-owned conditions and the standalone path.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { type ControlPlane, startControlPlane } from './harness/controlplane.ts';
import {
  type AgentProcess,
  agentArgs,
  type KubeEventJson,
  kmsg,
  marker,
  metricValue,
  type NodeConditionJson,
  nodeConditions,
  shippedRules,
  startAgent,
  waitFor,
  workDir,
} from './support.ts';

describe('agent against a real API server', () => {
  let cp: ControlPlane;
  let agent: AgentProcess;
  let readyBefore: NodeConditionJson | undefined;
  const pid = String(Math.floor(Math.random() * 900_000) + 100_000);

  before(
    async () => {
      cp = await startControlPlane();
      readyBefore = (await nodeConditions(cp)).find((c) => c.type === 'Ready');
      const dir = workDir();
      const configs = [shippedRules(dir, 'kernel.yaml'), shippedRules(dir, 'readonly.yaml')];
      agent = await startAgent(agentArgs(cp.agentKubeconfig, cp.nodeName, configs), { KUBECONFIG: '' });
    },
    { timeout: 60 * 60_000 },
  );

  after(async () => {
    const code = await agent?.stop();
    await cp?.stop({ failed: code !== 0 });
  });

  test('a hard-lockup line sets KernelDeadlock=True/HardLockup, seen by kubectl describe', async () => {
    kmsg(`Watchdog detected hard LOCKUP on cpu ${Number(pid) % 64}`);
    await waitFor(
      async () => {
        const kd = (await nodeConditions(cp)).find((c) => c.type === 'KernelDeadlock');
        return kd?.status === 'True' && kd.reason === 'HardLockup';
      },
      20_000,
      agent.output,
    );
    const describe = await cp.kubectl(['describe', 'node', cp.nodeName]);
    assert.match(describe, /KernelDeadlock\s+True\s.*HardLockup/);
    await waitFor(
      async () =>
        /Warning\s+HardLockup\s.*kernel-monitor/.test(await cp.kubectl(['describe', 'node', cp.nodeName])),
      20_000,
    );
    // The evidence (issue 38): on /conditions and the Event's annotation, not on the Node's condition.
    const served = (await (await fetch(`${agent.statusUrl}/conditions`)).json()) as {
      type: string;
      status: string;
      evidence: unknown;
    }[];
    const kdServed = served.find((c) => c.type === 'KernelDeadlock');
    assert.equal(kdServed?.status, 'True');
    assert.deepEqual(kdServed?.evidence, { source: 'kernel-monitor', plugin: 'kmsg', trust: 'kernel' });
    const node = JSON.parse(await cp.kubectl(['get', 'node', cp.nodeName, '-o', 'json'])) as {
      status: { conditions: Record<string, unknown>[] };
    };
    const kd = node.status.conditions.find((c) => c.type === 'KernelDeadlock') ?? {};
    assert.deepEqual(Object.keys(kd).sort(), [
      'lastHeartbeatTime',
      'lastTransitionTime',
      'message',
      'reason',
      'status',
      'type',
    ]);
    const event = (await ourEvents(cp)).find((e) => e.reason === 'HardLockup');
    assert.equal(event?.metadata.annotations?.['node-problem-detector.io/evidence'], 'kmsg/kernel');
  });

  test('N identical lines show as (xN over …) in the Events of kubectl describe', async () => {
    // A task named docker: TaskHung, but no DockerHung (the name is the task's own, docs/rules.md).
    const line = `INFO: task docker:${pid} blocked for more than 120 seconds.`;
    kmsg(line, line, line, line);
    await waitFor(
      async () => {
        const ev = (await ourEvents(cp)).find((e) => e.reason === 'TaskHung' && e.message === line);
        return ev?.count === 4;
      },
      20_000,
      agent.output,
    );
    const describe = await cp.kubectl(['describe', 'node', cp.nodeName]);
    assert.match(describe, /Warning\s+TaskHung\s+\S+ \(x4 over \S+\)\s+kernel-monitor/);
    // The evidence annotation (issue 38) splits nothing: one Event, counted 4 times, annotated.
    const hung = (await ourEvents(cp)).filter((e) => e.reason === 'TaskHung' && e.message === line);
    assert.deepEqual(
      hung.map((e) => [e.count, e.metadata.annotations?.['node-problem-detector.io/evidence']]),
      [[4, 'kmsg/kernel']],
    );
    const kd = (await nodeConditions(cp)).find((c) => c.type === 'KernelDeadlock');
    assert.equal(kd?.reason, 'HardLockup');
  });

  test('kubectl events --for node/<name> lists our events with apiVersion, kind and the node UID', async () => {
    const out = await cp.kubectl(['events', '--for', `node/${cp.nodeName}`]);
    assert.match(out, /TaskHung/);
    assert.match(out, /HardLockup/);
    for (const ev of await ourEvents(cp)) {
      assert.deepEqual(
        { ...ev.involvedObject, namespace: ev.involvedObject.namespace ?? '' },
        { kind: 'Node', name: cp.nodeName, uid: cp.nodeUid, apiVersion: 'v1', namespace: '' },
      );
      assert.equal(ev.source?.host, cp.nodeName);
    }
  });

  test('a % in a kernel message is kept verbatim', async () => {
    const line = `EXT4-fs error (device sda1): usage at 95% of ${marker()}`;
    kmsg(line);
    await waitFor(
      async () => (await ourEvents(cp)).some((e) => e.reason === 'Ext4Error' && e.message === line),
      20_000,
      agent.output,
    );
  });

  test('kubelet-owned conditions (Ready) survive our patches unchanged', async () => {
    assert.ok(readyBefore, 'the harness node starts with a Ready condition');
    const ready = (await nodeConditions(cp)).find((c) => c.type === 'Ready');
    assert.deepEqual(ready, readyBefore);
    const ours = (await nodeConditions(cp)).map((c) => c.type);
    for (const t of ['KernelDeadlock', 'XfsShutdown', 'CperHardwareErrorFatal', 'ReadonlyFilesystem'])
      assert.ok(ours.includes(t), t);
  });

  test('no request of the agent was refused (least privilege is enough)', async () => {
    assert.equal(cp.countAudit({ user: 'npd-agent', code: (c) => c === 403 }), 0);
    assert.equal((await metricValue(agent.metricsUrl, 'npd_condition_sync_total{result="failure"}')) ?? 0, 0);
    assert.ok(((await metricValue(agent.metricsUrl, 'npd_condition_sync_total{result="success"}')) ?? 0) > 0);
  });
});

test('standalone: with no cluster config the agent runs and serves /metrics', async () => {
  const dir = workDir();
  const agent = await startAgent([`--config.system-log-monitor=${shippedRules(dir, 'kernel.yaml')}`], {
    KUBECONFIG: '',
    KUBERNETES_SERVICE_HOST: '',
  });
  try {
    assert.equal(await metricValue(agent.metricsUrl, 'problem_counter{reason="HardLockup"}'), 0);
    assert.match(agent.output(), /running standalone/);
  } finally {
    assert.equal(await agent.stop(), 0);
  }
});

async function ourEvents(cp: ControlPlane): Promise<KubeEventJson[]> {
  const list = JSON.parse(await cp.kubectl(['get', 'events', '-n', 'default', '-o', 'json'])) as {
    items: KubeEventJson[];
  };
  return list.items.filter((e) => e.involvedObject.name === cp.nodeName);
}
