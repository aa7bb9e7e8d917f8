/**
 * Issue 38 item 2 on the real daemons: a pod whose commands are the words of containerd.yaml's and
 * kubelet.yaml's condition rules. runc cannot find such an executable, and the real containerd and
 * kubelet log the failure quoting the command (`exec: \"<command>\": executable file not found`), as
 * containerd.service's and kubelet.service's output in the test journald (harness/unit-output.ts): the
 * entries carry the trusted _SYSTEMD_UNIT, and only the quoting tells the pod's text from the daemon's
 * (src/sources/journald/quoted.ts). The journald component must count the matches as untrusted and
 * raise neither condition. The control, the daemons' own lines raising both, is journal.ts's next step
 * (conditionsAndEvents), which this leaves both conditions unset for.
 */
import assert from 'node:assert/strict';
import { run } from '../e2e/harness/processes.ts';
import { waitFor } from '../support/agent-process.ts';
import type { TestJournal } from '../support/journald.ts';
import { PAUSE_IMAGE } from './harness/containerd.ts';
import type { NodeCluster } from './harness/node-cluster.ts';
import { UnitOutput } from './harness/unit-output.ts';
import { waitCondition } from './probes.ts';
import { agentPods, conditionOf } from './support.ts';

/** The pattern of ContainerdCRIPluginFailed (containerd.yaml) and of PLEGNotHealthy (kubelet.yaml). */
export const PAYLOAD = {
  cri: 'failed to load plugin io.containerd.grpc.v1.cri: payload',
  pleg: 'PLEG is not healthy: pleg was last seen active 3m0s ago',
};
const POD = 'quoted-command';

function payloadPod(): string {
  const container = (name: string, command: string) => ({
    name,
    image: PAUSE_IMAGE,
    imagePullPolicy: 'IfNotPresent',
    command: [command],
  });
  return JSON.stringify({
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: { name: POD, namespace: 'default' },
    spec: {
      restartPolicy: 'Never',
      terminationGracePeriodSeconds: 1,
      // A runtime condition the restarts below may raise for a moment must not keep it off the node.
      tolerations: [{ operator: 'Exists' }],
      containers: [container('cri', PAYLOAD.cri), container('pleg', PAYLOAD.pleg)],
    },
  });
}

/** The MESSAGE of every entry `unit`'s processes wrote to the journal. */
async function unitLines(journal: TestJournal, unit: string): Promise<string[]> {
  const r = await run('journalctl', [
    `--directory=${journal.directory}`,
    '--output=cat',
    `_SYSTEMD_UNIT=${unit}`,
  ]);
  return r.stdout.split('\n');
}

/** npd_log_lines_untrusted_total{source,rule} on the agent pod's metrics (0 when absent). */
async function untrusted(node: NodeCluster, source: string, rule: string): Promise<number> {
  const [pod] = await agentPods(node);
  const text = await (await fetch(`http://${pod?.podIP}:20257/metrics`)).text();
  const series = text
    .split('\n')
    .find(
      (l) =>
        l.startsWith('npd_log_lines_untrusted_total{') &&
        l.includes(`source="${source}"`) &&
        l.includes(`rule="${rule}"`),
    );
  return series === undefined ? 0 : Number(series.slice(series.lastIndexOf(' ') + 1));
}

/** Restarts the kubelet and containerd, each run by `wrap` of its UnitOutput (identity: plain again). */
async function restartDaemons(node: NodeCluster, units?: { containerd: UnitOutput; kubelet: UnitOutput }) {
  await node.kubelet.stop();
  await node.containerd.stop();
  await node.containerd.start(units ? (a) => units.containerd.wrap(a) : undefined);
  await node.kubelet.start(units ? (a) => units.kubelet.wrap(a) : undefined);
}

export async function podCommandInDaemonLines(node: NodeCluster, journal: TestJournal): Promise<void> {
  const units = {
    containerd: new UnitOutput(journal, 'containerd.service', 'containerd'),
    kubelet: new UnitOutput(journal, 'kubelet.service', 'kubelet'),
  };
  const before = {
    cri: await untrusted(node, 'containerd-monitor', 'ContainerdCRIPluginFailed'),
    pleg: await untrusted(node, 'kubelet-monitor', 'PLEGNotHealthy'),
  };
  try {
    await restartDaemons(node, units);
    await node.kubectl(['apply', '-f', '-'], payloadPod());
    await daemonsQuotedIt(journal);
    await waitFor(
      async () =>
        (await untrusted(node, 'containerd-monitor', 'ContainerdCRIPluginFailed')) > before.cri &&
        (await untrusted(node, 'kubelet-monitor', 'PLEGNotHealthy')) > before.pleg,
      180_000,
      () => 'the payload lines were not counted in npd_log_lines_untrusted_total',
    );
  } finally {
    await node.kubectl(['delete', 'pod', '-n', 'default', POD, '--ignore-not-found', '--wait=false']);
    // Back to their log files before the journal stops (unit-output.ts says why).
    await restartDaemons(node);
    units.containerd.release();
    units.kubelet.release();
  }
  // The conditions a match would have raised: the agent patches a change within seconds, and the
  // restarts' probe answers within PROBE_DEADLINE_MS, which waitCondition gives them.
  await waitCondition(node, 'ContainerRuntimeUnhealthy', 'False');
  for (const type of ['ContainerdCRIUnavailable', 'PLEGUnhealthy']) {
    assert.notEqual((await conditionOf(node, type))?.status, 'True', `${type} from a pod's command`);
  }
}

/** The real daemons' lines quote both commands, under their units (what the rules would have matched). */
async function daemonsQuotedIt(journal: TestJournal): Promise<void> {
  const quoted = (lines: string[], command: string) =>
    lines.some((l) => l.includes(`exec: \\"${command}\\": executable file not found`));
  let last: Record<string, string[]> = {};
  await waitFor(
    async () => {
      last = {
        containerd: await unitLines(journal, 'containerd.service'),
        kubelet: await unitLines(journal, 'kubelet.service'),
      };
      return Object.values(last).every((lines) => quoted(lines, PAYLOAD.cri) && quoted(lines, PAYLOAD.pleg));
    },
    120_000,
    () =>
      Object.entries(last)
        .map(([u, l]) => `${u}:\n${l.filter((x) => x.includes('payload') || x.includes('PLEG')).join('\n')}`)
        .join('\n'),
  );
}
