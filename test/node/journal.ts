/**
 * The journald component reading a real systemd-journald under the real kubelet (test/support/journald.ts):
 * a pod's commands quoted in the real containerd's and kubelet's own lines raise nothing (journal-quoted.ts);
 * real containerd, kubelet and systemd wordings from test/corpus become conditions and events on the
 * Node, their benign look-alikes do not, entries written after a journal rotation and after a
 * journald restart still arrive, and a new pod resumes where the old one stopped (no journal event
 * twice, nothing written during the restart lost). The chart's journald switch does the same.
 */
import assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { parse } from 'yaml';
import { metricValue, waitFor } from '../support/agent-process.ts';
import { TestJournal } from '../support/journald.ts';
import type { NodeCluster } from './harness/node-cluster.ts';
import { podCommandInDaemonLines } from './journal-quoted.ts';
import {
  agentLogs,
  agentPods,
  conditionOf,
  describeNode,
  NS,
  nodeEvents,
  REPO,
  readyAgentPod,
} from './support.ts';

interface CorpusCase {
  readonly text: string;
  readonly expect?: unknown;
}

/** The corpus cases of test/corpus/<name>.yaml whose expectation passes `want`, in file order. */
function cases(name: string, want: (expect: unknown) => boolean): string[] {
  const doc = parse(fs.readFileSync(path.join(REPO, 'test/corpus', `${name}.yaml`), 'utf8')) as {
    cases: CorpusCase[];
  };
  return doc.cases.filter((c) => want(c.expect)).map((c) => c.text);
}

const json = (e: unknown) => JSON.stringify(e ?? null);
const condition = (type: string) => (e: unknown) => json(e).includes(`"type":"${type}"`);
const eventOnly = (reason: string) => (e: unknown) => json(e) === json({ kind: 'event', reason });
const none = (e: unknown) => e === 'none';

function first(name: string, want: (expect: unknown) => boolean): string {
  const [text] = cases(name, want);
  if (text === undefined) throw new Error(`test/corpus/${name}.yaml has no such case`);
  return text;
}

/** Each Event about one of `texts`, as `<reason> x<count>`, sorted: a line sent twice shows twice. */
async function eventsAbout(node: NodeCluster, texts: readonly string[]): Promise<string[]> {
  const out = await node.kubectl(['get', 'events', '-n', 'default', '-o', 'json']);
  const items = (JSON.parse(out) as { items: { reason: string; message: string; count?: number }[] }).items;
  return items
    .filter((e) => texts.some((t) => e.message.includes(t.slice(0, 60))))
    .map((e) => `${e.reason} x${e.count ?? 1}`)
    .sort();
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

export async function journalOnTheNode(node: NodeCluster): Promise<void> {
  const journal = new TestJournal(node.workDir);
  try {
    await journal.start();
    await podCommandInDaemonLines(node, journal);
    // The control: the daemons' own wordings raise both conditions, which the pod's commands left unset
    // (a transition before this would be theirs, however late its patch).
    const controlAt = Math.floor(Date.now() / 1000) * 1000;
    const written = await conditionsAndEvents(node, journal);
    for (const type of ['ContainerdCRIUnavailable', 'PLEGUnhealthy']) {
      const since = Date.parse((await conditionOf(node, type))?.lastTransitionTime ?? '');
      assert.ok(
        since >= controlAt,
        `${type} True since ${new Date(since).toISOString()}, before the control`,
      );
    }
    written.push(...(await rotationAndRestart(node, journal)));
    await podRestartResumes(node, journal, written);
  } finally {
    await journal.stop();
    journal.cleanup();
  }
}

async function conditionsAndEvents(node: NodeCluster, journal: TestJournal): Promise<string[]> {
  const [kubeletLike, containerdLike] = [first('kubelet', none), first('containerd', none)];
  const lines = {
    pleg: first('kubelet', condition('PLEGUnhealthy')),
    cri: first('containerd', condition('ContainerdCRIUnavailable')),
    start: first('systemd', eventOnly('KubeletStart')),
  };
  await journal.write('kubelet.service', 'kubelet', [lines.pleg, kubeletLike]);
  await journal.write('containerd.service', 'containerd', [lines.cri, containerdLike]);
  await journal.write('init.scope', 'systemd', [lines.start]);
  // The monitors look for the journal again every 60 s, then read from their start time.
  await waitFor(
    async () => /PLEGUnhealthy\s+True/.test(await describeNode(node)),
    180_000,
    () => 'PLEGUnhealthy never True',
  );
  await waitFor(async () => /ContainerdCRIUnavailable\s+True/.test(await describeNode(node)), 60_000);
  await waitFor(async () => /Normal\s+KubeletStart\s/.test(await nodeEvents(node)), 60_000);
  assert.deepEqual(await eventsAbout(node, [kubeletLike, containerdLike]), [], 'a look-alike made no event');
  return Object.values(lines);
}

async function rotationAndRestart(node: NodeCluster, journal: TestJournal): Promise<string[]> {
  const corrupt = first('containerd', eventOnly('CorruptContainerImageLayer'));
  const shim = first('containerd', eventOnly('ContainerdShimFailure'));
  await journal.rotate();
  await journal.write('containerd.service', 'containerd', [corrupt]);
  await journal.stop();
  await journal.start();
  await journal.write('containerd.service', 'containerd', [shim]);
  await waitFor(async () => (await eventsAbout(node, [corrupt, shim])).length === 2, 90_000);
  return [corrupt, shim];
}

/**
 * The agent keeps no cursor on the node: a new pod re-reads the journal's last `lookback` (5m in the
 * shipped files) and the per-source event watermark on the Node keeps what the old pod sent from being
 * sent again. So a line written while no pod runs arrives once, and the earlier ones do not repeat.
 */
async function podRestartResumes(node: NodeCluster, journal: TestJournal, written: string[]): Promise<void> {
  const before = await eventsAbout(node, written);
  const [old] = await agentPods(node);
  assert.ok(old, 'an agent pod runs');
  await node.kubectl(['-n', NS, 'delete', 'pod', old.name, '--wait=true']);
  const during = first('containerd', eventOnly('ContainerdSnapshotterError'));
  await journal.write('containerd.service', 'containerd', [during]);
  const next = await readyAgentPod(node);
  assert.notEqual(next.uid, old.uid);
  await explained(
    node,
    next,
    waitFor(async () => (await eventsAbout(node, [during])).length > 0, 90_000),
  );
  // The new pod's replay is done well within this; anything sent again would show by then.
  await sleep(20_000);
  assert.deepEqual(await eventsAbout(node, [during]), ['ContainerdSnapshotterError x1']);
  assert.deepEqual(await eventsAbout(node, written), before, 'no journal event sent again by the new pod');
  // Control: the new pod did re-read the old pod's lines (the rotation's and the restart's at least).
  const read = await metricValue(
    `http://${next.podIP}:20257/metrics`,
    'npd_log_lines_read_total{source="containerd-monitor"}',
  );
  assert.ok((read ?? 0) >= 3, `the new pod read ${read} containerd lines`);
}

/** A failed wait on `pod`'s work, with the pod's log tail and its containerd-monitor and event metrics. */
async function explained(node: NodeCluster, pod: { name: string; podIP: string }, wait: Promise<void>) {
  try {
    await wait;
  } catch (err) {
    const logs = await agentLogs(node, pod.name).catch((e: unknown) => String(e));
    const metrics = await fetch(`http://${pod.podIP}:20257/metrics`)
      .then((r) => r.text())
      .catch((e: unknown) => String(e));
    const relevant = metrics.split('\n').filter((l) => /containerd-monitor|^npd_event/.test(l));
    const detail = [`pod ${pod.name} log tail:`, logs.slice(-6000), 'metrics:', ...relevant].join('\n');
    throw new Error(`${(err as Error).message}\n${detail}`);
  }
}

/**
 * The chart's journald switch (`journald.enabled`) on the chart installed by the helm test: its pod
 * reads a new journal, a kubelet condition line, a systemd event line and a containerd look-alike.
 */
export async function chartJournal(node: NodeCluster): Promise<void> {
  const journal = new TestJournal(node.workDir);
  try {
    await journal.start();
    const cgroup = first('kubelet', condition('CgroupDriverMismatch'));
    const limit = first('systemd', eventOnly('ContainerdStartLimitHit'));
    const look = first('containerd', none);
    await journal.write('kubelet.service', 'kubelet', [cgroup]);
    await journal.write('init.scope', 'systemd', [limit]);
    await journal.write('containerd.service', 'containerd', [look]);
    await waitFor(
      async () => /CgroupDriverMismatch\s+True/.test(await describeNode(node)),
      180_000,
      () => 'CgroupDriverMismatch never True',
    );
    await waitFor(async () => (await eventsAbout(node, [limit])).length > 0, 60_000);
    assert.deepEqual(await eventsAbout(node, [limit]), ['ContainerdStartLimitHit x1']);
    assert.deepEqual(await eventsAbout(node, [look]), [], 'the look-alike made no event');
  } finally {
    await journal.stop();
    journal.cleanup();
  }
}
