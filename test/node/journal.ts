/**
 * The journald component reading a real systemd-journald under the real kubelet (test/support/journald.ts):
 * real containerd, kubelet and systemd wordings from test/corpus become conditions and events on the
 * Node, their benign look-alikes do not, and entries written after a journal rotation and after a
 * journald restart still arrive.
 */
import assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { parse } from 'yaml';
import { waitFor } from '../support/agent-process.ts';
import { TestJournal } from '../support/journald.ts';
import type { NodeCluster } from './harness/node-cluster.ts';
import { describeNode, nodeEvents, REPO } from './support.ts';

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

const escaped = (text: string) => text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');

export async function journalOnTheNode(node: NodeCluster): Promise<void> {
  const journal = new TestJournal(node.workDir);
  try {
    await journal.start();
    const [kubeletLike, containerdLike] = [first('kubelet', none), first('containerd', none)];
    await journal.write('kubelet.service', 'kubelet', [
      first('kubelet', condition('PLEGUnhealthy')),
      kubeletLike,
    ]);
    await journal.write('containerd.service', 'containerd', [
      first('containerd', condition('ContainerdCRIUnavailable')),
      containerdLike,
    ]);
    await journal.write('init.scope', 'systemd', [first('systemd', eventOnly('KubeletStart'))]);
    // The monitors look for the journal again every 60 s, then read from their start time.
    await waitFor(
      async () => /PLEGUnhealthy\s+True/.test(await describeNode(node)),
      180_000,
      () => 'PLEGUnhealthy never True',
    );
    await waitFor(async () => /ContainerdCRIUnavailable\s+True/.test(await describeNode(node)), 60_000);
    await waitFor(async () => /Normal\s+KubeletStart\s/.test(await nodeEvents(node)), 60_000);
    await journal.rotate();
    await journal.write('containerd.service', 'containerd', [
      first('containerd', eventOnly('CorruptContainerImageLayer')),
    ]);
    await journal.stop();
    await journal.start();
    await journal.write('containerd.service', 'containerd', [
      first('containerd', eventOnly('ContainerdShimFailure')),
    ]);
    await waitFor(async () => {
      const events = await nodeEvents(node);
      return /CorruptContainerImageLayer/.test(events) && /ContainerdShimFailure/.test(events);
    }, 90_000);
    const events = await nodeEvents(node);
    for (const text of [kubeletLike, containerdLike]) {
      assert.doesNotMatch(events, new RegExp(escaped(text.slice(0, 60))), 'a look-alike made no event');
    }
  } finally {
    await journal.stop();
    journal.cleanup();
  }
}
