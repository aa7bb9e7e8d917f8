/**
 * GPUUnhealthy across an agent restart in the same boot, on the real API server, with the kernel-log
 * owner and the NVML monitor (the fake NVML built from C, loaded through koffi) aggregating the type as
 * rules/gpu.yaml and rules/gpu-nvml.yaml do:
 * - a fatal Xid NVML's event wait delivered is not replayed after a restart: the condition stays True
 *   with its lastTransitionTime (a DaemonSet rollout must not end or restart a repair controller's wait);
 * - a pending row remap only the NVML check sees, healed by a GPU reset while the agent was down, clears
 *   after the restart: the kernel-log owner, which has no rule for it, does not hold it until reboot.
 * Controls (run by hand, 2026-12-06): with GpuMonitor.restore a no-op the first test fails (the Node's
 * condition goes False); with every owner adopting every reason the second times out True.
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { EVENT } from '../../src/host/nvml/api.ts';
import { type FakeNvmlHarness, fakeNvmlHarness } from '../support/fake-nvml/harness.ts';
import { type ControlPlane, startControlPlane } from './harness/controlplane.ts';
import type { AuditMark } from './harness/types.ts';
import {
  type AgentProcess,
  agentArgs,
  marker,
  type NodeConditionJson,
  startAgent,
  waitFor,
  workDir,
  writeConfig,
} from './support.ts';

const id = marker('gpurs');
const dir = workDir();
let cp: ControlPlane;
let fake: FakeNvmlHarness;

before(
  async () => {
    fake = fakeNvmlHarness();
    cp = await startControlPlane();
  },
  { timeout: 60 * 60_000 },
);

after(async () => {
  await cp?.stop();
  fake?.close();
});

function configs(type: string): string[] {
  const kernel = writeConfig(dir, 'gpu-kmsg.yaml', [
    'plugin: kmsg',
    `source: ${id}-kmsg`,
    'conditions:',
    `  - type: ${type}`,
    '    reason: GPUIsHealthy',
    '    message: no GPU error',
    '    aggregate: true',
    'rules:',
    '  - type: permanent',
    `    condition: ${type}`,
    // Xid 48 only: a held Xid 79 is then the NVML monitor's alone to resume.
    '    reason: NvidiaXID48Error',
    `    pattern: '${id} NVRM: Xid \\(PCI:[0-9a-f:.]+\\): 48\\b.*'`,
  ]);
  const nvml = writeConfig(dir, 'gpu-nvml.yaml', [
    'plugin: nvml',
    `source: ${id}-nvml`,
    `library: ${fake.library}`,
    'interval: 2s',
    'conditions:',
    `  - type: ${type}`,
    '    reason: GPUIsHealthy',
    '    message: no GPU error',
    '    aggregate: true',
  ]);
  return [kernel, nvml];
}

function start(type: string): Promise<AgentProcess> {
  const [kernel, nvml] = configs(type);
  const args = agentArgs(cp.agentKubeconfig, cp.nodeName, [kernel as string]);
  return startAgent([...args, `--config.gpu-monitor=${nvml}`], { KUBECONFIG: '', ...fake.env });
}

async function condition(type: string): Promise<NodeConditionJson | undefined> {
  const node = JSON.parse(await cp.kubectl(['get', 'node', cp.nodeName, '-o', 'json'])) as {
    status?: { conditions?: NodeConditionJson[] };
  };
  return node.status?.conditions?.find((c) => c.type === type);
}

const until = (agent: AgentProcess, type: string, status: string, reason?: string) =>
  waitFor(
    async () => {
      const c = await condition(type);
      return c?.status === status && (reason === undefined || c.reason === reason);
    },
    60_000,
    agent.output,
  );

/** Samples the Node's condition for `ms` after the restarted agent's first status write since `mark`. */
async function sampled(
  type: string,
  mark: AuditMark,
  ms: number,
): Promise<(NodeConditionJson | undefined)[]> {
  const patch = { user: 'npd-agent', resource: 'nodes', subresource: 'status', verb: 'patch' };
  await cp.waitForAudit(patch, mark, 1, 30_000);
  const seen: (NodeConditionJson | undefined)[] = [];
  for (const end = Date.now() + ms; Date.now() < end; ) {
    seen.push(await condition(type));
    await new Promise((r) => setTimeout(r, 500));
  }
  return seen;
}

describe('GPUUnhealthy across an agent restart', { timeout: 240_000 }, () => {
  test('a fatal Xid from NVML events stays True with its lastTransitionTime', async () => {
    const type = `GPUXid${id}`;
    fake.defaults();
    fake.clearEvents();
    const first = await start(type);
    try {
      await until(first, type, 'False');
      fake.events({ index: 0, type: EVENT.XID_CRITICAL, data: 79 });
      await until(first, type, 'True', 'NvidiaXID79Error');
    } finally {
      assert.equal(await first.stop(), 0);
    }
    const before = await condition(type);
    fake.clearEvents();
    const mark = cp.auditMark();
    const second = await start(type);
    try {
      const seen = await sampled(type, mark, 8_000);
      assert.ok(seen.length >= 10);
      for (const c of seen) {
        assert.equal(c?.status, 'True', 'never flaps to False');
        assert.equal(c?.lastTransitionTime, before?.lastTransitionTime);
      }
    } finally {
      assert.equal(await second.stop(), 0);
    }
  });

  test('a pending row remap healed while the agent was down clears after the restart', async () => {
    fake.clearEvents();
    fake.state({ gpus: [{ remap: { correctable: 0, uncorrectable: 1, pending: true, failure: false } }] });
    // The previous test's held Xid ends with a new boot only: a type of its own keeps the two apart.
    const type = `GPURemap${id}`;
    const first = await start(type);
    try {
      await until(first, type, 'True', 'NvidiaRowRemapPending');
    } finally {
      assert.equal(await first.stop(), 0);
    }
    fake.state({ gpus: [{ remap: { correctable: 0, uncorrectable: 1, pending: false, failure: false } }] });
    const second = await start(type);
    try {
      await until(second, type, 'False');
    } finally {
      assert.equal(await second.stop(), 0);
    }
  });
});
