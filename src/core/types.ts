import type { Evidence, JournalWriter } from './evidence.ts';

/**
 * The vocabulary shared by every stage of the pipeline. It mirrors NPD's pkg/types so that
 * configs, messages and metrics stay compatible.
 */

export type ConditionStatus = 'True' | 'False' | 'Unknown';

export interface Condition {
  readonly type: string;
  readonly status: ConditionStatus;
  /** Epoch milliseconds of the last status or reason change. */
  readonly transition: number;
  readonly reason: string;
  readonly message: string;
  /**
   * What raised it (core/evidence.ts), on a condition a match or a result set to a problem; never
   * written to the Node (its NodeCondition has no field for it), shown by /conditions.
   */
  readonly evidence?: Evidence | undefined;
}

/** The node subsystem a rule or probe watches; each has one `<Subsystem>Ready` condition. */
export const SUBSYSTEMS = [
  'kernel',
  'networking',
  'storage',
  'container-runtime',
  'accelerated-hardware',
] as const;
export type Subsystem = (typeof SUBSYSTEMS)[number];

/**
 * How bad a problem is for its subsystem: `info` is recorded only, `warning` makes the subsystem
 * condition False, `fatal` means the node needs a repair or a replacement.
 */
export const IMPACTS = ['info', 'warning', 'fatal'] as const;
export type Impact = (typeof IMPACTS)[number];

/** A rule's or a file's subsystem and impact, as declared (both optional: NPD's files have neither). */
export interface HealthTag {
  readonly subsystem?: Subsystem | undefined;
  readonly impact?: Impact | undefined;
}

/** `info` becomes a Normal event, `warn` a Warning event. */
export type Severity = 'info' | 'warn';

export interface ProblemEvent {
  readonly severity: Severity;
  /** Epoch milliseconds. */
  readonly timestamp: number;
  readonly reason: string;
  readonly message: string;
  /** What raised it (core/evidence.ts); the Event carries it as an annotation, not in reason or message. */
  readonly evidence?: Evidence | undefined;
  /**
   * The hardware occurrence it reports, where two sources can see the same one (an Xid in the kernel log
   * and from NVML's event wait): the pipeline passes one event per occurrence, whichever source is first.
   */
  readonly occurrence?: XidOccurrence | undefined;
}

/** One Xid of one GPU: NVIDIA's error code, the GPU's PCI bus id (normalised "dddd:bb:dd") and UUID. */
export interface XidOccurrence {
  readonly kind: 'xid';
  readonly code: number;
  readonly busId: string;
  readonly uuid?: string | undefined;
}

/**
 * One problem_counter increment. A reason expanded from a rule's template (`Xid${1}`) names the template
 * and its catch-all reason, so the metrics can bound the series one template makes.
 */
export type CountedReason =
  | string
  | { readonly reason: string; readonly template: string; readonly catchAll: string };

/** What a monitor reports: new events (oldest first) and its full current condition list. */
export interface Status {
  readonly source: string;
  readonly events: readonly ProblemEvent[];
  readonly conditions: readonly Condition[];
}

/** `[start, end)` offsets into a line's message (UTF-16 units, as String.slice counts). */
export type QuotedSpan = readonly [start: number, end: number];

/** One log record from any log source, already stripped of its own framing. */
export interface LogLine {
  /** Epoch milliseconds. */
  readonly timestamp: number;
  readonly message: string;
  /**
   * Spans of the message that its trusted writer (the kernel, containerd, the kubelet) quotes from user
   * space: a process or file name, a pod's command. No rule may take them as evidence
   * (rules/untrusted.ts). Usually absent: the monitor asks its source's classifier on a match instead.
   */
  readonly quoted?: readonly QuotedSpan[] | undefined;
  /**
   * Set when the source knows the writer and it is not one the config trusts (a journal entry from
   * an unprivileged process): why. Such a line may give at most an info event, never a condition.
   */
  readonly untrusted?: string | undefined;
  /** journald only: the trusted fields of a writer the config's trustedWriter checked, for Evidence. */
  readonly writer?: JournalWriter | undefined;
}

/** How a running monitor is doing, as /healthz and the monitor metrics report it. */
export interface MonitorHealth {
  /** The monitor is running (its reader or scheduler is alive). */
  readonly up: boolean;
  /** The last read or probe succeeded. A monitor can be up but unhealthy (e.g. the journal is missing). */
  readonly healthy: boolean;
  /** Why it is not healthy, for logs and /healthz bodies. */
  readonly detail?: string;
  /** When it stopped being healthy (agent clock, ms), if the monitor knows; /healthz counts from it. */
  readonly since?: number;
  /**
   * Up and unhealthy because its input does not exist here (a node without a journal): a restart
   * would not help, so /healthz says why but stays ok, and the kubelet does not restart the pod.
   */
  readonly waiting?: boolean;
}

/** What a one-shot command (replay, seal) reads and writes instead of the process's streams. */
export interface CommandIo {
  readonly stdout: (text: string) => void;
  readonly stderr: (text: string) => void;
  readonly readStdin: () => string;
}
