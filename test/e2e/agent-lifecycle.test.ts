// Beyond NPD: what happens to a condition after it is set, proven against the real API server.
import assert from 'node:assert/strict';
import { writeFileSync } from 'node:fs';
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
  startAgent,
  waitFor,
  workDir,
  writeConfig,
} from './support.ts';

const id = marker('life');
const dir = workDir();
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

function lifecycleConfig(extraConditions: string[] = [], extraRules: string[] = []): string {
  return writeConfig(dir, 'lifecycle.yaml', [
    'plugin: kmsg',
    'lookback: 5m',
    `source: ${id}-monitor`,
    'conditions:',
    `  - type: Disk${id}`,
    '    reason: DiskOK',
    '    message: disk is fine',
    `  - type: Clock${id}`,
    '    reason: ClockOK',
    '    message: clock is fine',
    '    clearAfter: 3s',
    ...extraConditions,
    'rules:',
    '  - type: permanent',
    `    condition: Disk${id}`,
    '    reason: DiskReadOnly',
    `    pattern: '${id}: disk \\w+ remounted read-only'`,
    `    recoverPattern: '${id}: disk \\w+ remounted read-write'`,
    '  - type: permanent',
    `    condition: Clock${id}`,
    '    reason: ClockJumped',
    `    pattern: '${id}: clock jumped'`,
    '  - type: temporary',
    // Go template syntax for the agent, not JavaScript placeholders.
    `    reason: GPUXid$\{xid}`,
    `    message: GPU Xid $xid on $\{pci}`,
    `    pattern: '${id}: NVRM: Xid \\(PCI:(?P<pci>[0-9a-f:.]+)\\): (?P<xid>\\d+), .*'`,
    ...extraRules,
  ]);
}

describe('condition lifecycle', () => {
  let agent: AgentProcess;
  let config: string;

  before(async () => {
    config = lifecycleConfig();
    agent = await startAgent(
      [...agentArgs(cp.agentKubeconfig, cp.nodeName, [config]), '--config-reload-period=1s'],
      { KUBECONFIG: '' },
    );
    await waitFor(async () => (await condition(`Disk${id}`))?.status === 'False', 20_000, agent.output);
  });

  after(async () => {
    await agent?.stop();
  });

  test('recoverPattern clears a log condition and its gauge', async () => {
    kmsg(`${id}: disk sdb remounted read-only`);
    await waitFor(async () => (await condition(`Disk${id}`))?.status === 'True', 20_000, agent.output);
    const gauge = `problem_gauge{type="Disk${id}",reason="DiskReadOnly"}`;
    assert.equal(await metricValue(agent.metricsUrl, gauge), 1);
    kmsg(`${id}: disk sdb remounted read-write`);
    await waitFor(async () => (await condition(`Disk${id}`))?.reason === 'DiskOK', 20_000, agent.output);
    assert.equal((await condition(`Disk${id}`))?.status, 'False');
    assert.equal(await metricValue(agent.metricsUrl, gauge), 0);
  });

  test('clearAfter returns a condition to False when no line matched for that long', async () => {
    kmsg(`${id}: clock jumped`);
    await waitFor(async () => (await condition(`Clock${id}`))?.status === 'True', 20_000, agent.output);
    await waitFor(async () => (await condition(`Clock${id}`))?.status === 'False', 20_000, agent.output);
    assert.equal((await condition(`Clock${id}`))?.reason, 'ClockOK');
  });

  test('reasons and messages are templated from capture groups', async () => {
    kmsg(`${id}: NVRM: Xid (PCI:0000:3b:00): 79, pid=1234, GPU has fallen off the bus.`);
    await waitFor(
      async () =>
        (await events()).some((e) => e.reason === 'GPUXid79' && e.message === 'GPU Xid 79 on 0000:3b:00'),
      20_000,
      agent.output,
    );
  });

  test('the Node records which condition types the agent manages', async () => {
    const annotations = await nodeAnnotations();
    const managed = JSON.parse(
      annotations['node-problem-detector.io/managed-conditions'] ?? '[]',
    ) as string[];
    assert.deepEqual(managed, [`Clock${id}`, `Disk${id}`]);
  });

  test('hot reload: a valid change applies without a restart, an invalid one is refused', async () => {
    const pid = agent.child.pid;
    lifecycleConfig(
      [],
      ['  - type: temporary', '    reason: ReloadedRule', `    pattern: '${id}: reloaded rule fires'`],
    );
    await waitFor(
      async () => (await metricValue(agent.metricsUrl, 'npd_config_reloads_total{result="success"}')) === 1,
      20_000,
      agent.output,
    );
    kmsg(`${id}: reloaded rule fires`);
    await waitFor(
      async () => (await events()).some((e) => e.reason === 'ReloadedRule'),
      20_000,
      agent.output,
    );
    writeFileSync(config, 'plugin: kmsg\nrules:\n  - type: permanent\n    reason: X\n    pattern: "("\n');
    await waitFor(
      async () => (await metricValue(agent.metricsUrl, 'npd_config_last_reload_successful')) === 0,
      20_000,
      agent.output,
    );
    assert.match(agent.output(), /rules\[0\]\.pattern: invalid regex/);
    kmsg(`${id}: reloaded rule fires`);
    await waitFor(
      async () => (await events()).some((e) => e.reason === 'ReloadedRule' && (e.count ?? 1) >= 2),
      20_000,
      agent.output,
    );
    assert.equal(agent.child.pid, pid);
    assert.equal(agent.child.exitCode, null);
  });
});

describe('restarts and ownership', () => {
  test('a restart neither flaps a True condition nor re-posts events its lookback replays', {
    timeout: 180_000,
  }, async () => {
    const config = lifecycleConfig();
    const args = agentArgs(cp.agentKubeconfig, cp.nodeName, [config]);
    const first = await startAgent(args, { KUBECONFIG: '' });
    kmsg(`${id}: disk sdc remounted read-only`);
    await waitFor(async () => (await condition(`Disk${id}`))?.status === 'True', 20_000, first.output);
    await waitFor(
      async () => (await events()).some((e) => e.reason === 'DiskReadOnly' && e.message.includes('sdc')),
      20_000,
      first.output,
    );
    const before = await condition(`Disk${id}`);
    const eventsBefore = (await events()).filter((e) => e.message.includes('sdc'));
    assert.equal(await first.stop(), 0);
    // A moved watermark has no write of its own before the heartbeat: a condition patch or the
    // shutdown flush carries it.
    const watermarks = (await nodeAnnotations())['node-problem-detector.io/event-watermarks'] ?? '';
    assert.ok(watermarks.includes(`${id}-monitor`), watermarks);
    const mark = cp.auditMark();
    const second = await startAgent(args, { KUBECONFIG: '' });
    try {
      await cp.waitForAudit(
        { user: 'npd-agent', resource: 'nodes', subresource: 'status', verb: 'patch' },
        mark,
        1,
        20_000,
      );
      for (let i = 0; i < 10; i++) {
        const now = await condition(`Disk${id}`);
        assert.equal(now?.status, 'True', 'never flaps to False');
        assert.equal(now?.lastTransitionTime, before?.lastTransitionTime);
        await new Promise((r) => setTimeout(r, 300));
      }
      const eventsAfter = (await events()).filter((e) => e.message.includes('sdc'));
      assert.deepEqual(
        eventsAfter.map((e) => [e.metadata.name, e.count]),
        eventsBefore.map((e) => [e.metadata.name, e.count]),
      );
      assert.ok(
        ((await metricValue(
          second.metricsUrl,
          `npd_events_replay_suppressed_total{source="${id}-monitor"}`,
        )) ?? 0) >= 1,
      );
    } finally {
      assert.equal(await second.stop(), 0);
    }
  });

  test('condition types no longer configured are deleted from the Node', { timeout: 120_000 }, async () => {
    const withExtra = lifecycleConfig([
      `  - type: Legacy${id}`,
      '    reason: LegacyOK',
      '    message: legacy',
    ]);
    const first = await startAgent(agentArgs(cp.agentKubeconfig, cp.nodeName, [withExtra]), {
      KUBECONFIG: '',
    });
    await waitFor(async () => (await condition(`Legacy${id}`)) !== undefined, 20_000, first.output);
    await first.stop();
    const without = lifecycleConfig();
    const second = await startAgent(agentArgs(cp.agentKubeconfig, cp.nodeName, [without]), {
      KUBECONFIG: '',
    });
    try {
      await waitFor(async () => (await condition(`Legacy${id}`)) === undefined, 20_000, second.output);
      assert.ok(
        (await nodeConditions()).some((c) => c.type === 'Ready'),
        'kubelet conditions untouched',
      );
    } finally {
      await second.stop();
    }
  });
});

async function nodeJson(): Promise<{
  metadata: { annotations?: Record<string, string> };
  status?: { conditions?: NodeConditionJson[] };
}> {
  return JSON.parse(await cp.kubectl(['get', 'node', cp.nodeName, '-o', 'json']));
}

async function nodeAnnotations(): Promise<Record<string, string>> {
  return (await nodeJson()).metadata.annotations ?? {};
}

async function nodeConditions(): Promise<NodeConditionJson[]> {
  return (await nodeJson()).status?.conditions ?? [];
}

async function condition(type: string): Promise<NodeConditionJson | undefined> {
  return (await nodeConditions()).find((c) => c.type === type);
}

async function events(): Promise<KubeEventJson[]> {
  const list = JSON.parse(await cp.kubectl(['get', 'events', '-n', 'default', '-o', 'json'])) as {
    items: KubeEventJson[];
  };
  return list.items.filter((e) => e.source?.component === `${id}-monitor`);
}
