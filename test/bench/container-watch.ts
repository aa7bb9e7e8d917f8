/**
 * Watches the agent's container from the host while the container bench runs its phases: the cgroup
 * (memory peak, OOM kills, CPU and CFS throttling), the agent process (VmRSS, VmHWM), its /metrics, the
 * kernel's /dev/kmsg sequence number, the apiserver's audit log, `podman inspect` and /healthz once a
 * second. Each phase starts with the peaks reset, so its peak is its own; the overall figures are the
 * worst phase (start-up included) and the totals from the first reading to the last.
 */
import { writeFileSync } from 'node:fs';
import type { Pod } from '../container/pod.ts';
import { type ContainerState, inspectState } from '../container/podman.ts';
import type { AuditMark, ControlPlane } from '../e2e/harness/controlplane.ts';
import { scrape } from './built-agent.ts';
import { type Cgroup, type CgroupReading, cgroupOf, readCgroup, resetPeak } from './cgroup.ts';
import { HealthPoller, type HealthTally } from './health-poll.ts';
import { lastKmsgSeq } from './kmsg-seq.ts';
import { childProcesses, loadNote, statusKiB } from './proc.ts';

export interface Snapshot {
  readonly at: number;
  readonly cg: CgroupReading;
  /** The cgroup is gone (the container exited): `cg` is the last reading taken, at most 1 s old. */
  readonly cgGone: boolean;
  /** Empty when /metrics did not answer. */
  readonly metrics: Map<string, number>;
  readonly kmsgSeq: number;
  readonly mark: AuditMark;
  readonly rssKiB: number;
  readonly anonKiB: number;
  readonly fileKiB: number;
  readonly hwmKiB: number;
  readonly state: ContainerState;
  readonly load: string;
}

/** One phase (or the whole run): its first and last reading and what happened in between. */
export interface Span {
  readonly title: string;
  readonly from: Snapshot;
  readonly to: Snapshot;
  readonly health: HealthTally;
  readonly peakBytes: number;
  readonly hwmKiB: number;
  /** Whose peaks: this phase's own (reset at its start), since the container started, the worst phase. */
  readonly peaks: string;
}

export interface Begun {
  readonly from: Snapshot;
  readonly peaks: string;
}

/** The agent: the node process under the container's init (tini), as the host sees it. */
function agentPid(initPid: number): number {
  const agent = childProcesses(initPid).find((p) => p.cmdline.some((a) => a.endsWith('dist/main.js')));
  if (!agent) throw new Error(`no agent process under the container's init ${initPid}`);
  return agent.pid;
}

async function scrapeOrEmpty(url: string): Promise<Map<string, number>> {
  try {
    return await scrape(url);
  } catch {
    return new Map();
  }
}

function procKiB(pid: number, field: string): number {
  try {
    return statusKiB(pid, field);
  } catch {
    return Number.NaN; // the process is gone (killed)
  }
}

export class ContainerWatch {
  readonly spans: Span[] = [];
  private readonly poller: HealthPoller;
  private readonly sampler: NodeJS.Timeout;
  private lastCg: CgroupReading;
  private readonly cp: ControlPlane;
  private readonly pod: Pod;
  readonly cgroup: Cgroup;
  readonly agentPid: number;

  private constructor(cp: ControlPlane, pod: Pod, cgroup: Cgroup, agentPid: number) {
    this.cp = cp;
    this.pod = pod;
    this.cgroup = cgroup;
    this.agentPid = agentPid;
    this.poller = new HealthPoller(`${pod.status}/healthz`);
    this.lastCg = readCgroup(cgroup);
    // The runtime removes the cgroup when the container exits: keep a recent reading for that case.
    this.sampler = setInterval(() => this.readCg(), 1000);
  }

  private readCg(): { cg: CgroupReading; cgGone: boolean } {
    try {
      this.lastCg = readCgroup(this.cgroup);
      return { cg: this.lastCg, cgGone: false };
    } catch {
      return { cg: this.lastCg, cgGone: true };
    }
  }

  static attach(cp: ControlPlane, pod: Pod): ContainerWatch {
    const { pid } = inspectState(pod.c.name);
    return new ContainerWatch(cp, pod, cgroupOf(pid), agentPid(pid));
  }

  /** True once the container's `podman run` has exited. */
  exited(): boolean {
    return this.pod.c.child.exitCode !== null;
  }

  async snapshot(): Promise<Snapshot> {
    return {
      at: Date.now(),
      ...this.readCg(),
      metrics: await scrapeOrEmpty(this.pod.metrics),
      kmsgSeq: lastKmsgSeq(),
      mark: this.cp.auditMark(),
      rssKiB: procKiB(this.agentPid, 'VmRSS'),
      anonKiB: procKiB(this.agentPid, 'RssAnon'),
      fileKiB: procKiB(this.agentPid, 'RssFile'),
      hwmKiB: procKiB(this.agentPid, 'VmHWM'),
      state: inspectState(this.pod.c.name),
      load: loadNote(),
    };
  }

  /** Resets the memory peaks (cgroup; VmHWM via clear_refs 5) and starts a new health tally. */
  async begin(): Promise<Begun> {
    let own = false;
    try {
      own = resetPeak(this.cgroup);
    } catch {
      // the cgroup is gone; the snapshot says so
    }
    try {
      writeFileSync(`/proc/${this.agentPid}/clear_refs`, '5');
    } catch {
      // the agent is gone; its VmHWM reads NaN
    }
    this.poller.takePhase();
    const peaks = own ? "this phase's own" : 'since the container started (cgroup v2 keeps one peak)';
    return { from: await this.snapshot(), peaks };
  }

  async end(title: string, begun: Begun): Promise<Span> {
    const to = await this.snapshot();
    const span: Span = {
      title,
      from: begun.from,
      to,
      health: this.poller.takePhase(),
      peakBytes: to.cg.peakBytes,
      hwmKiB: to.hwmKiB,
      peaks: begun.peaks,
    };
    this.spans.push(span);
    return span;
  }

  /** From `first` to now: totals, the health of every check, the worst phase's peaks. */
  async overall(first: Snapshot, startup: Pick<Span, 'peakBytes' | 'hwmKiB'>): Promise<Span> {
    const to = await this.snapshot();
    // A phase whose agent was gone reads NaN: the worst is taken over what could be read.
    const max = (f: (s: Pick<Span, 'peakBytes' | 'hwmKiB'>) => number) =>
      Math.max(...[startup, ...this.spans].map(f).filter(Number.isFinite));
    return {
      title: 'overall',
      from: first,
      to,
      health: this.poller.overall(),
      peakBytes: max((s) => s.peakBytes),
      hwmKiB: max((s) => s.hwmKiB),
      peaks: 'the worst phase, start-up included',
    };
  }

  async stop(): Promise<void> {
    clearInterval(this.sampler);
    await this.poller.stop();
  }
}
