// Opt-in taints against a real kube-apiserver: the taint follows the condition, foreign taints are
// never touched, and without the flag the agent never patches a Node object.
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { after, before, describe, test } from 'node:test';
import { parse as parseYaml } from 'yaml';
import { TAINTS_ANNOTATION } from '../../src/taints/plan.ts';
import { CLUSTER_ROLE_FILE, type ControlPlane, startControlPlane } from './harness/controlplane.ts';
import {
  type AgentProcess,
  agentArgs,
  kmsg,
  marker,
  metricValue,
  type NodeConditionJson,
  startAgent,
  waitFor,
  workDir,
  writeConfig,
} from './support.ts';

const ROLE = 'npd-e2e-taint';
const TAINT_USER = 'npd-agent-taint';
const PLAIN_USER = 'npd-agent-no-taint';
const KEY = 'node.npd.io/e2e-broken';

interface TaintJson {
  key: string;
  value?: string;
  effect: string;
  timeAdded?: string;
}

interface NodeJson {
  metadata: { annotations?: Record<string, string> };
  spec: { taints?: TaintJson[] };
  status: { conditions?: NodeConditionJson[] };
}

async function node(cp: ControlPlane): Promise<NodeJson> {
  return JSON.parse(await cp.kubectl(['get', 'node', cp.nodeName, '-o', 'json'])) as NodeJson;
}

async function conditionStatus(cp: ControlPlane, type: string): Promise<string | undefined> {
  return (await node(cp)).status.conditions?.find((c) => c.type === type)?.status;
}

function ours(n: NodeJson): TaintJson | undefined {
  return n.spec.taints?.find((t) => t.key === KEY && t.effect === 'NoSchedule');
}

/**
 * /dev/kmsg is one ring for the whole host: a flood from another test can overwrite our line before
 * the agent reads it. The rules are idempotent, so the line is simply written again until it shows.
 */
async function kmsgUntil(line: string, seen: () => Promise<boolean>, agent: AgentProcess): Promise<void> {
  for (let attempt = 1; ; attempt++) {
    kmsg(line);
    try {
      await waitFor(seen, 5_000);
      return;
    } catch (err) {
      if (attempt >= 6)
        throw new Error(`"${line}" never took effect\n${agent.output().slice(-4000)}`, { cause: err });
    }
  }
}

/** Runs `body` against a fresh agent; keeps the control plane's logs when it fails. */
async function withAgent(cp: ControlPlane, args: string[], body: (agent: AgentProcess) => Promise<void>) {
  const agent = await startAgent(args, { KUBECONFIG: '' });
  let failed = true;
  try {
    await body(agent);
    failed = false;
  } finally {
    await agent.stop();
    if (failed) cp.markFailed();
  }
}

async function changes(agent: AgentProcess) {
  const value = (series: string) => metricValue(agent.metricsUrl, series);
  return {
    add: await value('npd_taint_changes_total{action="add"}'),
    remove: await value('npd_taint_changes_total{action="remove"}'),
    failures: await value('npd_taint_failures_total'),
  };
}

/** A foreign taint, and one with our key but another effect: neither may ever change. */
async function addForeignTaints(cp: ControlPlane): Promise<TaintJson[] | undefined> {
  await cp.kubectl(['taint', 'node', cp.nodeName, 'e2e.example.com/foreign=keep:NoSchedule']);
  await cp.kubectl(['taint', 'node', cp.nodeName, `${KEY}=theirs:PreferNoSchedule`]);
  const foreign = (await node(cp)).spec.taints;
  assert.equal(foreign?.length, 3, 'not-ready (admission) and the two added here');
  return foreign;
}

/** A kmsg monitor with one permanent rule for `type` that a second line recovers. */
function monitorConfig(type: string, mark: string): string {
  return writeConfig(workDir(), 'taint-monitor.yaml', [
    'plugin: kmsg',
    'logPath: /dev/kmsg',
    'lookback: 0s',
    'bufferSize: 10',
    'source: taint-e2e-monitor',
    'conditions:',
    `  - type: ${type}`,
    '    reason: NotBroken',
    '    message: all fine',
    'rules:',
    '  - type: permanent',
    `    condition: ${type}`,
    '    reason: Broken',
    `    pattern: 'npd-taint-e2e ${mark} broken'`,
    `    recoverPattern: 'npd-taint-e2e ${mark} recovered'`,
  ]);
}

describe('opt-in taint on condition', () => {
  let cp: ControlPlane;

  before(
    async () => {
      cp = await startControlPlane({ users: [{ name: TAINT_USER }, { name: PLAIN_USER }] });
      // The shipped least-privilege role plus the one rule the taint feature needs.
      const base = parseYaml(readFileSync(CLUSTER_ROLE_FILE, 'utf8')) as { rules: unknown[] };
      const role = {
        apiVersion: 'rbac.authorization.k8s.io/v1',
        kind: 'ClusterRole',
        metadata: { name: ROLE },
        rules: [...base.rules, { apiGroups: [''], resources: ['nodes'], verbs: ['patch'] }],
      };
      const created = await cp.request('POST', '/apis/rbac.authorization.k8s.io/v1/clusterroles', {
        body: role,
      });
      assert.equal(created.status, 201, created.text);
    },
    { timeout: 60 * 60_000 },
  );

  after(async () => {
    await cp?.stop();
  });

  test('the taint is on the Node while the condition is True; recovery removes only ours', {
    timeout: 120_000,
  }, async () => {
    const foreign = await addForeignTaints(cp);
    const kubeconfig = await cp.writeKubeconfig(TAINT_USER, { clusterRole: ROLE });
    const type = 'TaintE2EBroken';
    const mark = marker('taint');
    const args = [
      ...agentArgs(kubeconfig, cp.nodeName, [monitorConfig(type, mark)]),
      `--taint-on-condition=${type}=${KEY}:NoSchedule`,
    ];
    await withAgent(cp, args, async (agent) => {
      await waitFor(async () => (await conditionStatus(cp, type)) === 'False', 30_000, agent.output);
      assert.deepEqual((await node(cp)).spec.taints, foreign, 'False adds nothing');
      await kmsgUntil(`npd-taint-e2e ${mark} broken`, async () => ours(await node(cp)) !== undefined, agent);
      const tainted = await node(cp);
      assert.deepEqual(ours(tainted), { key: KEY, value: 'true', effect: 'NoSchedule' });
      assert.equal(tainted.metadata.annotations?.[TAINTS_ANNOTATION], `${KEY}:NoSchedule`);
      assert.deepEqual(tainted.spec.taints?.slice(0, 3), foreign, 'appended after the foreign taints');
      assert.deepEqual(await changes(agent), { add: 1, remove: 0, failures: 0 });
      // The taint can land before the 1 s condition sync; the restart below resumes from the Node.
      await waitFor(async () => (await conditionStatus(cp, type)) === 'True', 30_000, agent.output);
    });
    // A restarted agent resumes the True condition from the Node and keeps the taint; the annotation
    // tells it the taint is its own, so the recovery line makes it remove the taint.
    await withAgent(cp, args, async (agent) => {
      await new Promise((r) => setTimeout(r, 3_000));
      assert.equal(await conditionStatus(cp, type), 'True');
      assert.notEqual(ours(await node(cp)), undefined, 'the restart kept the taint');
      await kmsgUntil(
        `npd-taint-e2e ${mark} recovered`,
        async () => ours(await node(cp)) === undefined,
        agent,
      );
      const recovered = await node(cp);
      assert.deepEqual(recovered.spec.taints, foreign, 'foreign taints, same key included, untouched');
      assert.equal(recovered.metadata.annotations?.[TAINTS_ANNOTATION], undefined);
      assert.deepEqual(await changes(agent), { add: 0, remove: 1, failures: 0 });
    });
    const patches = { user: TAINT_USER, resource: 'nodes', subresource: null, verb: 'patch' };
    assert.equal(cp.countAudit({ ...patches, code: 200 }), 2, 'one add, one remove, nothing in between');
    assert.equal(cp.countAudit({ user: TAINT_USER, code: 403 }), 0);
  });

  test('without the flag the agent never patches the Node object', { timeout: 120_000 }, async () => {
    // Bound to the same role: RBAC would allow the patch, so only the agent can be holding back.
    const kubeconfig = await cp.writeKubeconfig(PLAIN_USER, { clusterRole: ROLE });
    const type = 'TaintE2EUnflagged';
    const mark = marker('taint');
    await withAgent(cp, agentArgs(kubeconfig, cp.nodeName, [monitorConfig(type, mark)]), async (agent) => {
      await waitFor(async () => (await conditionStatus(cp, type)) === 'False', 30_000, agent.output);
      await kmsgUntil(
        `npd-taint-e2e ${mark} broken`,
        async () => (await conditionStatus(cp, type)) === 'True',
        agent,
      );
      await new Promise((r) => setTimeout(r, 2_000));
      const patches = { user: PLAIN_USER, resource: 'nodes', verb: 'patch' };
      assert.equal(cp.countAudit({ ...patches, subresource: null }), 0);
      assert.ok(cp.countAudit({ ...patches, subresource: 'status' }) > 0, 'it did write the condition');
      assert.equal(await metricValue(agent.metricsUrl, 'npd_taint_changes_total{action="add"}'), undefined);
      assert.equal(ours(await node(cp)), undefined);
    });
  });
});
