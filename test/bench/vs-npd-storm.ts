/**
 * The event storm side by side: NPD and this agent report to the same real kube-apiserver as two Nodes
 * (vs-npd-cluster.ts) while distinct OOM-kill lines arrive on /dev/kmsg.
 */
import { randomBytes } from 'node:crypto';
import { runWriter } from './kmsg-writer.ts';
import type { NpdBuild } from './npd-go.ts';
import { formatUsage, loadNote, measure, statusKiB } from './proc.ts';
import { withReportingPair, writesPair } from './vs-npd-cluster.ts';

export interface StormFigures {
  readonly hwm: { npd: number; ours: number };
  readonly load: string;
}

interface StormOptions {
  readonly stormLines: number;
  readonly stormSeconds: number;
}

export function stormSideBySide(build: NpdBuild, o: StormOptions): Promise<StormFigures> {
  return withReportingPair(build, async (cp, pair) => {
    await new Promise((r) => setTimeout(r, 5000));
    const mark = cp.auditMark();
    const marker = `npdvs${randomBytes(4).toString('hex')}`;
    const windowMs = (o.stormSeconds + 20) * 1000;
    const [usage] = await Promise.all([
      Promise.all([measure(pair.npd.pid, windowMs), measure(pair.ours.pid, windowMs)]),
      runWriter({ rate: 0, seconds: o.stormSeconds, marks: o.stormLines, shape: 'oom-kill' }, marker),
    ]);
    console.log(`## Event storm: ${o.stormLines} distinct OOM-kill lines in ${o.stormSeconds} s, then 20 s`);
    console.log(`  NPD:        ${formatUsage(usage[0])}`);
    console.log(`  this agent: ${formatUsage(usage[1])}`);
    const writes = writesPair(cp, mark);
    console.log(`  apiserver audit log, writes: NPD ${writes.npd.byKind}; this agent ${writes.ours.byKind}`);
    const exited = [pair.npd, pair.ours].filter((p) => p.child.exitCode !== null);
    if (exited.length > 0) console.log(`  exited during the storm: ${exited.map((p) => p.pid).join(', ')}`);
    return {
      hwm: { npd: statusKiB(pair.npd.pid, 'VmHWM'), ours: statusKiB(pair.ours.pid, 'VmHWM') },
      load: loadNote(),
    };
  });
}
