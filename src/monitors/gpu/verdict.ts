import type { Evidence } from '../../core/evidence.ts';
import type { Condition, ConditionStatus, ProblemEvent } from '../../core/types.ts';
import type { ConditionConfig } from '../../rules/config.ts';
import { conditionChangeEvent } from '../../rules/condition-event.ts';
import type { GpuFinding } from './check.ts';

/** GPUUnhealthy's reason while NVML cannot answer: the verdict is unknown, not healthy. */
export const NVML_UNAVAILABLE = 'NVMLUnavailable';

/** Node condition messages stay readable in `kubectl describe node`; the rest is counted, not dropped. */
const MAX_MESSAGE = 1024;

/** What one poll (or NVML's failure) says of the GPUs. */
export type Verdict =
  | { readonly status: 'True'; readonly fatal: readonly GpuFinding[] }
  | { readonly status: 'False' }
  | { readonly status: 'Unknown'; readonly why: string };

/**
 * True while any fatal finding holds (the first one's reason, in the poll's deterministic order); else
 * Unknown when some call had no answer (never False on a guess); else False.
 */
export function judge(fatal: readonly GpuFinding[], unanswered: readonly string[]): Verdict {
  if (fatal.length > 0) return { status: 'True', fatal };
  if (unanswered.length > 0) return { status: 'Unknown', why: unanswered.join('; ') };
  return { status: 'False' };
}

/**
 * "NvidiaDoubleBitError: GPU 1 (…) …; NvidiaRowRemapPending: GPU 0 (…) …", every finding named once (a
 * finding restored after a restart and the same one found again read alike), cut at MAX_MESSAGE.
 */
export function findingsMessage(findings: readonly GpuFinding[]): string {
  const parts = [...new Set(findings.map((f) => `${f.reason}: ${f.message}`))];
  let out = '';
  for (let i = 0; i < parts.length; i++) {
    const part = `${i === 0 ? '' : '; '}${parts[i]}`;
    if (out.length + part.length > MAX_MESSAGE) return `${out}; and ${parts.length - i} more`;
    out += part;
  }
  return out;
}

/**
 * The monitor's one condition (GPUUnhealthy). A change of status or reason gives NPD's condition-change
 * event; a new message alone (another GPU joins the finding) updates the condition without one. Its
 * lastTransitionTime moves with the status only.
 */
export class GpuCondition {
  private readonly config: ConditionConfig;
  private readonly evidence: Evidence;
  private current: Condition;

  constructor(config: ConditionConfig, evidence: Evidence, now: number) {
    this.config = config;
    this.evidence = evidence;
    this.current = {
      type: config.type,
      status: 'False',
      transition: now,
      reason: config.reason,
      message: config.message,
    };
  }

  get(): Condition {
    return this.current;
  }

  /** The Node's True condition from before a restart (this boot): its reason, message and time stand. */
  restore(c: Condition): void {
    if (this.current.status === 'True') {
      // Found again since start: its own reason stands, the older time with it.
      this.current = { ...this.current, transition: Math.min(this.current.transition, c.transition) };
      return;
    }
    const { reason, message, transition } = c;
    this.current = {
      type: this.config.type,
      status: 'True',
      reason,
      message,
      transition,
      evidence: this.evidence,
    };
  }

  apply(v: Verdict, now: number): ProblemEvent | undefined {
    const next = this.next(v);
    const prev = this.current;
    const changed = prev.status !== next.status || prev.reason !== next.reason;
    const problem = next.status === 'True';
    this.current = {
      type: this.config.type,
      ...next,
      // Only a new status moves it: repair controllers time their grace period from it (core/transition.ts).
      transition: prev.status !== next.status ? now : prev.transition,
      ...(problem ? { evidence: this.evidence } : {}),
    };
    if (!changed) return undefined;
    const event = conditionChangeEvent(this.config.type, next.status, next.reason, next.message, now);
    return problem ? { ...event, evidence: this.evidence } : event;
  }

  private next(v: Verdict): { status: ConditionStatus; reason: string; message: string } {
    if (v.status === 'True') {
      const first = v.fatal[0] as GpuFinding;
      return { status: 'True', reason: first.reason, message: findingsMessage(v.fatal) };
    }
    if (v.status === 'Unknown') return { status: 'Unknown', reason: NVML_UNAVAILABLE, message: v.why };
    return { status: 'False', reason: this.config.reason, message: this.config.message };
  }
}

/**
 * Warning findings give one Warning event when they appear (by check, GPU and reason: the value in the
 * message may move), not one per poll; one that clears and comes
 * back is new again. A check that had no answer this poll keeps what it held, so an error is no clear.
 */
export class WarningTracker {
  private held = new Map<string, ReadonlySet<string>>();

  /** `slots`: per (check, GPU) slot key, its warnings this poll, or undefined when it had no answer. */
  appeared(slots: ReadonlyMap<string, readonly GpuFinding[] | undefined>): GpuFinding[] {
    const next = new Map<string, ReadonlySet<string>>();
    const fresh: GpuFinding[] = [];
    for (const [slot, warnings] of slots) {
      const before = this.held.get(slot) ?? new Set<string>();
      if (warnings === undefined) {
        next.set(slot, before);
        continue;
      }
      const now = new Set(warnings.map((w) => w.reason));
      for (const w of warnings) if (!before.has(w.reason)) fresh.push(w);
      next.set(slot, now);
    }
    this.held = next;
    return fresh;
  }
}
