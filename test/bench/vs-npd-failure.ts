/**
 * A correlated failure side by side, as BENCHMARKS.md e models it for a fleet: the same hung-task
 * error hits the node, and the kernel repeats it every 10 s for a minute. Both report to the same
 * kube-apiserver (vs-npd-cluster.ts) with NPD's kernel-monitor.json, whose DockerHung rule makes it
 * the KernelDeadlock condition and whose TaskHung rule makes every line a Warning event; what each
 * writes in the 65 s is counted from the audit log.
 */
import { closeSync, openSync, writeSync } from 'node:fs';
import type { NpdBuild } from './npd-go.ts';
import { loadNote } from './proc.ts';
import { type Writes, withReportingPair, writesPair } from './vs-npd-cluster.ts';

export interface FailureFigures {
  readonly writes: { npd: Writes; ours: Writes };
  readonly load: string;
}

const REPEAT_MS = 10_000;
const FAILURE_MS = 60_000;
const TAIL_MS = 5000;
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** kernel/hung_task.c check_hung_task(): "INFO: task %s:%d blocked for more than %ld seconds." */
function hungTask(pid: number): void {
  const fd = openSync('/dev/kmsg', 'w');
  try {
    writeSync(fd, `<3>INFO: task docker:${pid} blocked for more than 120 seconds.\n`);
  } finally {
    closeSync(fd);
  }
}

export function failureSideBySide(build: NpdBuild): Promise<FailureFigures> {
  return withReportingPair(build, async (cp) => {
    // Past start-up: both have replayed the 5 min lookback and written what it held.
    await sleep(10_000);
    const mark = cp.auditMark();
    const pid = 20_000 + Math.floor(Math.random() * 10_000);
    for (let t = 0; t < FAILURE_MS; t += REPEAT_MS) {
      hungTask(pid);
      await sleep(REPEAT_MS);
    }
    await sleep(TAIL_MS);
    const writes = writesPair(cp, mark);
    console.log(`## Correlated failure: "task docker:${pid} blocked" every 10 s for 60 s, then 5 s`);
    console.log(`  NPD:        ${writes.npd.total} writes (${writes.npd.byKind})`);
    console.log(`  this agent: ${writes.ours.total} writes (${writes.ours.byKind})`);
    return { writes, load: loadNote() };
  });
}
