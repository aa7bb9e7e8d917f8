// The shipped DaemonSet under a real kubelet, kube-scheduler, kube-controller-manager, containerd and
// runc (harness/node-cluster.ts), installed as the README says. One cluster, in phases:
//   base   kubectl apply -k of deploy/base with only an image override: Running and Ready through the
//          kubelet's probes, start-up lines in kubectl logs, a marked kernel line as condition and event
//          on the kubelet-registered Node across kubelet status updates, the pod's bound token
//   probes a rolling update to a second image tag with the node-probes, taint and journald components
//          (no event sent twice, conditions kept), the journald monitors waiting on this journal-less
//          node, containerd and kubelet stopped and started under the real probes, taints acted on by
//          the scheduler and the taint manager, a flood and event storm under the kubelet's cgroups,
//          token rotation, no restart for 5 minutes, a deleted pod recreated
//   journal a real systemd-journald read by the journald component: a pod's command quoted in the
//          real containerd's and kubelet's own output raises nothing, their own lines do; across a
//          rotation, a journald restart and a pod restart
//   helm   helm install of the chart with the image set, then its journald switch on a real journal and
//          its pstore switch on a crash dump, and its gpu switch on this GPU-less node (gpu.ts)
//   npm run test:node
import assert from 'node:assert/strict';
import * as path from 'node:path';
import { after, before, describe, test } from 'node:test';
import { waitFor } from '../support/agent-process.ts';
import { NODE_IP } from './harness/network.ts';
import { type NodeCluster, startNodeCluster } from './harness/node-cluster.ts';
import { gpuOnGpulessNode } from './gpu.ts';
import { helmBinary, helmInstall, helmUpgrade } from './helm.ts';
import {
  checkIdentity,
  checkPulledFromRegistry,
  checkStartedByKubelet,
  nodeView,
  survivesKubeletUpdates,
} from './install.ts';
import { chartJournal, journalOnTheNode } from './journal.ts';
import { checkRotation, watchRestarts } from './lifecycle.ts';
import { formatLoad, loadPod } from './load.ts';
import { probesOverlayPatch, writeProbesWithoutSystemd } from './overlay.ts';
import {
  bothProbesHealthy,
  podPhase,
  SUBSYSTEM_RECOVERY_MS,
  taintsAct,
  taintsGone,
  testPod,
  waitCondition,
} from './probes.ts';
import { withPstorePanic } from './pstore.ts';
import { nodeSkip } from './skip.ts';
import {
  type AgentPod,
  agentPods,
  conditionOf,
  DS,
  NS,
  nodeEvents,
  readyAgentPod,
  waitRollout,
  writeOverlay,
} from './support.ts';

describe('the DaemonSet under a real kubelet and containerd', { skip: nodeSkip() }, () => {
  let node: NodeCluster;
  let pod: AgentPod;
  let mark = '';
  let probesStart = 0;

  before(
    async () => {
      node = await startNodeCluster();
    },
    { timeout: 60 * 60_000 },
  );

  after(
    async () => {
      await node?.stop();
    },
    { timeout: 180_000 },
  );

  test('kubectl apply -k deploy/base + image: pulled from the registry, Running and Ready through the kubelet probes; start-up in logs', {
    timeout: 300_000,
  }, async () => {
    await node.kubectl([
      'apply',
      '-k',
      writeOverlay(path.join(node.workDir, 'base'), { image: node.agentImage }),
    ]);
    await waitRollout(node);
    pod = await readyAgentPod(node);
    await checkPulledFromRegistry(node, pod);
    await checkStartedByKubelet(node, pod);
  });

  test('a marked kernel line: condition and event on the Node, kept across kubelet status updates', {
    timeout: 300_000,
  }, async () => {
    mark = await nodeView(node);
    await survivesKubeletUpdates(node);
  });

  test('the agent writes with its projected, node-bound ServiceAccount token', {
    timeout: 120_000,
  }, async () => {
    await checkIdentity(node, pod);
  });

  test('rolling update to a second image tag: pod replaced, conditions kept, no event sent twice', {
    timeout: 300_000,
  }, async () => {
    const image = await node.tagAgentImage('ci-rollout');
    const dir = path.join(node.workDir, 'probes');
    writeOverlay(dir, {
      image,
      // journald last: the patch below replaces the node-probes component's argument by its index.
      components: ['node-probes', 'taint', 'journald'],
      dsPatch: probesOverlayPatch(),
      configFiles: [writeProbesWithoutSystemd(dir)],
    });
    await node.kubectl(['apply', '-k', dir]);
    await waitRollout(node);
    const next = await readyAgentPod(node);
    assert.notEqual(next.uid, pod.uid);
    assert.equal(next.image, image);
    pod = next;
    probesStart = Date.now();
    assert.equal((await conditionOf(node, 'XfsShutdown'))?.status, 'True');
    await new Promise((r) => setTimeout(r, 20_000));
    const events = JSON.parse(await node.kubectl(['get', 'events', '-n', 'default', '-o', 'json'])).items as {
      reason: string;
      message: string;
      count?: number;
    }[];
    const ours = events.filter((e) => e.message.includes(mark)).map((e) => `${e.reason} x${e.count ?? 1}`);
    // Each event about the marked lines once, with count 1: the new pod replayed the lines but sent
    // nothing again. (The XfsShutdown change event is there only when no earlier XFS line of the last
    // 5 minutes, such as the container suite's, had set the condition first.)
    assert.ok(ours.includes('OOMKilling x1'), JSON.stringify(ours));
    assert.deepEqual(
      ours,
      [...new Set(ours)].filter((e) => e.endsWith(' x1')),
      JSON.stringify(ours),
    );
  });

  test('no journal on this node: the journald monitors wait and say why, /healthz stays 200, no restart', {
    timeout: 180_000,
  }, async () => {
    // This machine runs no systemd-journald: both journal folders the base mounts are empty, where
    // journalctl follows nothing without a word. The monitors must say so, yet not fail /healthz (a
    // restart cannot make a journal appear), and the kubelet must not restart the pod.
    await waitFor(() => Date.now() - Date.parse(pod.startedAt) > 75_000, 120_000);
    const r = await fetch(`http://${pod.podIP}:20256/healthz`);
    const body = await r.text();
    assert.equal(r.status, 200, body);
    for (const m of ['containerd-monitor', 'kubelet-monitor', 'systemd-monitor']) {
      assert.match(
        body,
        new RegExp(`^${m}: waiting \\(no journal files in /host/(run|var)/log/journal`, 'm'),
      );
    }
    assert.match(body, /^kernel-monitor: healthy$/m);
    const metrics = await (await fetch(`http://${pod.podIP}:20257/metrics`)).text();
    assert.match(metrics, /^npd_monitor_healthy\{source="kubelet-monitor"\} 0$/m);
    assert.match(metrics, /^npd_monitor_healthy\{source="kernel-monitor"\} 1$/m);
    assert.equal((await agentPods(node))[0]?.restartCount, 0);
  });

  test('node-probes: on the host network the agent listens on the node IP only, as docs/install.md says', async () => {
    assert.equal(pod.podIP, NODE_IP, 'a host-network pod has the node IP');
    assert.equal(
      (await fetch(`http://${NODE_IP}:20256/healthz`)).status,
      200,
      'control: the node IP answers',
    );
    assert.equal(
      (await fetch(`http://${NODE_IP}:20257/metrics`)).status,
      200,
      'control: the node IP answers',
    );
    // Loopback is another node address: nothing may answer there.
    for (const port of [20256, 20257]) {
      await assert.rejects(fetch(`http://127.0.0.1:${port}/`), /fetch failed/, `127.0.0.1:${port}`);
    }
  });

  test('real probes: containerd and the kubelet healthy, down, recovered; taints act while the runtime is down', {
    timeout: 900_000,
  }, async () => {
    try {
      await bothProbesHealthy(node);
      await node.kubectl(['apply', '-f', '-'], testPod('victim'));
      await waitFor(async () => (await podPhase(node, 'victim'))?.phase === 'Running', 120_000);
      await node.containerd.stop();
      await waitCondition(node, 'ContainerRuntimeUnhealthy', 'True', /Containerd/);
      await waitCondition(node, 'ContainerRuntimeReady', 'False');
      await taintsAct(node, 'victim', 'pending');
      assert.equal((await agentPods(node))[0]?.uid, pod.uid, 'the agent pod tolerates its own taint');
      await node.containerd.start();
      await waitCondition(node, 'ContainerRuntimeUnhealthy', 'False');
      await waitCondition(node, 'ContainerRuntimeReady', 'True', undefined, SUBSYSTEM_RECOVERY_MS);
      await taintsGone(node, 'pending');
      await node.kubelet.stop();
      await waitCondition(node, 'KubeletUnhealthy', 'True', /Kubelet/);
      await node.kubelet.start();
      await waitCondition(node, 'KubeletUnhealthy', 'False');
      await node.kubectl([
        'delete',
        'pod',
        '-n',
        'default',
        'pending',
        'victim',
        'tolerant',
        '--ignore-not-found',
        '--wait=false',
      ]);
    } finally {
      // A failure above must not leave the node without its runtime or kubelet for the next tests.
      if (!node.containerd.running) await node.containerd.start();
      if (!node.kubelet.running) await node.kubelet.start();
    }
  });

  test('60 s kernel flood and an event storm under the kubelet-enforced limits: no OOM kill, no restart', {
    timeout: 600_000,
  }, async () => {
    const f = await loadPod(pod, { rate: 40_000, seconds: 60, storm: 200 });
    process.stdout.write(`${formatLoad(f)}\n`);
    const [p] = await agentPods(node);
    assert.equal(p?.uid, pod.uid);
    assert.equal(p?.restartCount, 0, `restarted: ${JSON.stringify(p?.lastTermination)}`);
    assert.ok(
      f.healthz.some((c) => c === 200),
      'healthz answered during the load',
    );
    assert.ok(f.flood.written > 0 && f.storm.written > 0);
  });

  test('restartCount stays 0 for 5 minutes and the rotated short-lived token keeps working', {
    timeout: 900_000,
  }, async () => {
    await watchRestarts(node, pod, probesStart + 5 * 60_000);
    await checkRotation(node);
  });

  test('a deleted pod is recreated by the DaemonSet and converges', { timeout: 300_000 }, async () => {
    await node.kubectl(['-n', NS, 'delete', 'pod', pod.name, '--wait=true']);
    const next = await readyAgentPod(node);
    assert.notEqual(next.uid, pod.uid);
    await waitCondition(node, 'ContainerRuntimeUnhealthy', 'False');
    assert.equal((await conditionOf(node, 'XfsShutdown'))?.status, 'True');
    assert.match(await nodeEvents(node), new RegExp(mark));
    pod = next;
  });

  test('journal: a real systemd-journald read by the journald component: a pod command quoted by the real daemons raises nothing; conditions, events, no look-alike, rotation, journald and pod restart', {
    timeout: 900_000,
  }, async () => {
    await journalOnTheNode(node);
  });

  test('helm install of the chart with the image set: Running and Ready, start-up in logs', {
    timeout: 60 * 60_000,
  }, async () => {
    const helm = await helmBinary();
    await node.kubectl(['-n', NS, 'delete', 'daemonset', DS, '--wait=true']);
    await node.kubectl([
      'delete',
      '-k',
      path.join(node.workDir, 'probes'),
      '--ignore-not-found',
      '--wait=true',
    ]);
    await helmInstall(node, helm);
    const p = await readyAgentPod(node);
    await checkStartedByKubelet(node, p);
  });

  test('journal: the chart with journald.enabled reads a real systemd-journald; pstore.enabled reports the crash dump', {
    timeout: 600_000,
  }, async () => {
    await withPstorePanic(async () => {
      const values = ['--set', 'journald.enabled=true', '--set', 'pstore.enabled=true'];
      await helmUpgrade(node, await helmBinary(), values);
      await readyAgentPod(node);
      // test/fixtures/pstore/panic: a general protection fault, then the panic it caused.
      await waitFor(async () => /Warning\s+PreviousBootPanic\s/.test(await nodeEvents(node)), 120_000);
      // From the dump, not from this host's own previous boot in its journal.
      assert.match(await nodeEvents(node), /not syncing: Fatal exception \(Panic#2 in pstore \(dmesg-/);
      await chartJournal(node);
    });
  });

  test('gpu.enabled on this GPU-less node: "no NVML library" said once, /healthz 200, no GPU problem, no error', {
    timeout: 600_000,
  }, async () => {
    await gpuOnGpulessNode(node);
  });
});
