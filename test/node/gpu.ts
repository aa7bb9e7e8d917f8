/**
 * The gpu switch on this GPU-less node (issue 40 section 4): the chart with gpu.enabled, as on a GPU node
 * pool. The node gets the GPU Operator's label, nvidia.com/gpu.present=true, because the gpu values
 * select GPU nodes by it; it has no NVIDIA GPU, driver or container runtime, so runc ignores the
 * NVIDIA_* variables and the pod has no libnvidia-ml.so.1. The agent must say so once (its log and
 * /healthz), keep /healthz 200 and the pod Ready without a restart, report nothing from NVML (no
 * condition with the NVML monitor's evidence, GPUUnhealthy never Unknown), and log no error.
 * GPUUnhealthy itself is gpu.yaml's too: on this shared machine the kernel ring can hold the Xid lines
 * other suites wrote (the container suite's Xid 79), which its kernel-log rules rightly report; a True
 * one must carry that evidence, never the NVML monitor's.
 */
import assert from 'node:assert/strict';
import { waitFor } from '../support/agent-process.ts';
import type { NodeCluster } from './harness/node-cluster.ts';
import { helmBinary, helmUpgrade } from './helm.ts';
import { agentLogs, conditionOf, readyAgentPod } from './support.ts';

const LABEL = 'nvidia.com/gpu.present';
const SOURCE = 'gpu-nvml-monitor';

/** A row of the agent's /conditions: its evidence names the monitor that raised it. */
interface Served {
  type: string;
  status: string;
  evidence: { source?: string } | null;
}

async function metric(podIP: string, series: string): Promise<number | undefined> {
  const text = await (await fetch(`http://${podIP}:20257/metrics`)).text();
  const line = text.split('\n').find((l) => l.startsWith(`${series} `));
  return line === undefined ? undefined : Number(line.slice(series.length + 1));
}

/** Runs the check with the label and gpu.enabled, then takes both away again. */
export async function gpuOnGpulessNode(node: NodeCluster): Promise<void> {
  const helm = await helmBinary();
  await node.kubectl(['label', 'node', node.nodeName, `${LABEL}=true`, '--overwrite']);
  try {
    await helmUpgrade(node, helm, ['--set', 'gpu.enabled=true']);
    const pod = await readyAgentPod(node);
    const state = (s: string) => metric(pod.podIP, `npd_gpu_monitor_state{source="${SOURCE}",state="${s}"}`);
    await waitFor(
      async () => (await state('no_library')) === 1,
      60_000,
      () => `no_library not reached`,
    );
    assert.equal(await state('running'), 0);
    const logs = await agentLogs(node, pod.name);
    const idle = logs.split('\n').filter((l) => l.includes('GPU monitor idle'));
    assert.equal(idle.length, 1, `said once:\n${logs.slice(-4000)}`);
    assert.match(idle[0]!, /no NVML library \(libnvidia-ml\.so\.1\).*no GPU condition is reported/);
    assert.doesNotMatch(logs, /"level":"error"|"level":50\b/, 'no error in the log');
    const health = await fetch(`http://${pod.podIP}:20256/healthz`);
    const body = await health.text();
    assert.equal(health.status, 200, body);
    assert.match(body, new RegExp(`${SOURCE}: waiting \\(no NVML library`));
    const gpu = await conditionOf(node, 'GPUUnhealthy');
    assert.notEqual(gpu?.status, 'Unknown', JSON.stringify(gpu));
    const served = (await (await fetch(`http://${pod.podIP}:20256/conditions`)).json()) as Served[];
    assert.deepEqual(
      served.filter((c) => c.evidence?.source === SOURCE),
      [],
      'no condition from the NVML monitor',
    );
    const own = served.find((c) => c.type === 'GPUUnhealthy');
    if (own?.status === 'True') assert.equal(own.evidence?.source, 'gpu-monitor', JSON.stringify(own));
    assert.equal((await readyAgentPod(node)).restartCount, pod.restartCount, 'no restart');
  } finally {
    await helmUpgrade(node, helm, ['--set', 'gpu.enabled=false']);
    await node.kubectl(['label', 'node', node.nodeName, `${LABEL}-`]);
  }
}
