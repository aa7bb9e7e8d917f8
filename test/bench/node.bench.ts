/**
 * The agent pod under a real kubelet and containerd (test/node/harness) with deploy/base's requests and
 * limits enforced by the kubelet's cgroups, through a kernel log flood and an event storm: what the
 * node suite's load test asserts (no OOM kill, no restart), with the figures. Prints; asserts nothing.
 *   npm run bench -- node --rate=40000 --seconds=60 --storm-lines=200   (root; floods /dev/kmsg)
 */
import * as fs from 'node:fs';
import * as path from 'node:path';
import { startNodeCluster } from '../node/harness/node-cluster.ts';
import { formatLoad, loadPod } from '../node/load.ts';
import { agentPods, readyAgentPod, waitRollout, writeOverlay } from '../node/support.ts';

export interface NodeBenchOptions {
  readonly rate: number;
  readonly seconds: number;
  readonly stormLines: number;
}

/** The pod's memory cgroup (v1, cgroupfs driver): kubepods/<qos>/pod<uid>. */
function podMemoryCgroup(uid: string): string | undefined {
  const root = '/sys/fs/cgroup/memory/kubepods';
  for (const dir of [root, path.join(root, 'burstable'), path.join(root, 'besteffort')]) {
    const p = path.join(dir, `pod${uid}`);
    if (fs.existsSync(p)) return p;
  }
  return undefined;
}

function readNumber(file: string): number {
  return Number(fs.readFileSync(file, 'utf8').trim());
}

export async function nodeBench(o: NodeBenchOptions): Promise<void> {
  const node = await startNodeCluster();
  try {
    await node.kubectl([
      'apply',
      '-k',
      writeOverlay(path.join(node.workDir, 'base'), { image: node.agentImage }),
    ]);
    await waitRollout(node);
    const pod = await readyAgentPod(node);
    const cg = podMemoryCgroup(pod.uid);
    if (cg) fs.writeFileSync(path.join(cg, 'memory.max_usage_in_bytes'), '0');
    const f = await loadPod(pod, { rate: o.rate, seconds: o.seconds, storm: o.stormLines });
    console.log(formatLoad(f));
    if (cg) {
      const limit = readNumber(path.join(cg, 'memory.limit_in_bytes')) / 2 ** 20;
      const peak = readNumber(path.join(cg, 'memory.max_usage_in_bytes')) / 2 ** 20;
      console.log(`pod memory cgroup: peak ${peak.toFixed(1)} MiB of the ${limit.toFixed(0)} MiB limit`);
    }
    const [after] = await agentPods(node);
    console.log(
      `pod ${after?.name}: restarts ${after?.restartCount}, last termination ${JSON.stringify(after?.lastTermination ?? null)}`,
    );
  } finally {
    await node.stop();
  }
}
