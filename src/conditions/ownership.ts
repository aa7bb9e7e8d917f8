import { isReservedConditionType } from '../core/reserved-conditions.ts';
import type { Condition, ConditionStatus } from '../core/types.ts';
import type { NodeSnapshot } from '../kube/client.ts';
import { parseKubeTime } from '../kube/time.ts';

/** The condition types this agent manages, so a later version can delete the ones it dropped. */
export const MANAGED_ANNOTATION = 'node-problem-detector.io/managed-conditions';
/** Per source, the newest event timestamp already recorded, so a lookback replay is not re-posted. */
export const WATERMARK_ANNOTATION = 'node-problem-detector.io/event-watermarks';
/** The boot the Node's conditions were written in, so a restart after a reboot does not resume them. */
export const BOOT_ANNOTATION = 'node-problem-detector.io/boot-id';

/** What a status patch carries besides the conditions. */
export interface PatchExtras {
  readonly deleteTypes: readonly string[];
  readonly annotations: Readonly<Record<string, string>>;
}

export interface StartupPlan {
  /** The Node's current values of the types we manage, to resume from instead of resetting. */
  readonly restore: readonly Condition[];
  /** Types an earlier configuration managed and this one does not. */
  readonly stale: readonly string[];
  readonly watermarks: Readonly<Record<string, number>>;
  /**
   * The owned conditions the Node showed from an earlier boot, not resumed: whatever they said ended
   * with that boot (a kernel oops, a file system forced read-only, a GPU that needs a reset), and what
   * still holds is found again by this boot's log and probes. Empty when the boot is the same or
   * cannot be told (no boot ID, or a Node written by a version without the annotation).
   */
  readonly endedAtBoot: readonly Condition[];
}

/**
 * Ownership of node conditions (NPD #1011, #304): which types we manage, what to delete, and what to
 * resume from. Pure; the condition manager sends `extras()` with every status patch.
 */
export class Ownership {
  private configured: readonly string[];
  private stale: readonly string[] = [];
  private watermarks: Record<string, number> = {};
  private readonly bootId: string | undefined;

  /** `bootId`: this boot's /proc/sys/kernel/random/boot_id, undefined where it cannot be read. */
  constructor(configuredTypes: readonly string[], bootId?: string) {
    this.configured = ours(configuredTypes);
    this.bootId = bootId;
  }

  plan(node: NodeSnapshot): StartupPlan {
    const owned = new Set(this.configured);
    const found = node.conditions
      .map(toCondition)
      .filter((c): c is Condition => c !== undefined && owned.has(c.type));
    const written = node.annotations[BOOT_ANNOTATION];
    const rebooted = this.bootId !== undefined && written !== undefined && written !== this.bootId;
    // Only what the annotation records as ours is ever deleted, and never a kubelet type, even one an
    // older version (or a hand-edited annotation) recorded: that would erase the kubelet's own report.
    const previous = parseList(node.annotations[MANAGED_ANNOTATION]).filter(
      (t) => !isReservedConditionType(t),
    );
    const present = new Set(node.conditions.map((c) => c.type));
    this.stale = previous.filter((t) => !owned.has(t) && present.has(t));
    this.watermarks = parseWatermarks(node.annotations[WATERMARK_ANNOTATION]);
    return {
      restore: rebooted ? [] : found,
      stale: this.stale,
      watermarks: { ...this.watermarks },
      endedAtBoot: rebooted ? found.filter((c) => c.status === 'True') : [],
    };
  }

  /** A reload changed the configured types: the ones dropped are deleted from the Node. */
  configure(types: readonly string[]): void {
    const next = ours(types);
    const dropped = this.configured.filter((t) => !next.includes(t));
    this.stale = [...new Set([...this.stale, ...dropped])];
    this.configured = next;
  }

  /**
   * Returns true when the watermark moved, i.e. the annotation is worth re-sending. An event stamped
   * after `now` counts as of `now`, and a watermark found after `now` (a clock that ran ahead, a forged
   * annotation) is replaced: it only rises, so one mark in the future would stay there and make every
   * later replay, a previous boot's crash report among them, look already posted.
   */
  advance(source: string, timestamp: number, now: number): boolean {
    const at = Math.min(timestamp, now);
    const mark = this.watermarks[source];
    if (mark !== undefined && mark <= now && mark >= at) return false;
    this.watermarks[source] = at;
    return true;
  }

  extras(): PatchExtras {
    return {
      deleteTypes: this.stale,
      annotations: {
        [MANAGED_ANNOTATION]: JSON.stringify(this.configured),
        [WATERMARK_ANNOTATION]: JSON.stringify(this.watermarks),
        ...(this.bootId === undefined ? {} : { [BOOT_ANNOTATION]: this.bootId }),
      },
    };
  }

  /** After a successful patch the deleted types are gone and need not be sent again. */
  confirmed(sent: PatchExtras): void {
    this.stale = this.stale.filter((t) => !sent.deleteTypes.includes(t));
  }
}

/**
 * The types the agent may manage: config validation refuses the kubelet's types, and this keeps them
 * out of the managed set anyway, so none is resumed, recorded as ours or later deleted as dropped.
 */
function ours(types: readonly string[]): string[] {
  return [...new Set(types)].filter((t) => !isReservedConditionType(t)).sort();
}

function toCondition(raw: Record<string, unknown>): Condition | undefined {
  const { type, status } = raw;
  if (typeof type !== 'string' || (status !== 'True' && status !== 'False' && status !== 'Unknown'))
    return undefined;
  return {
    type,
    status: status as ConditionStatus,
    transition: parseKubeTime(raw.lastTransitionTime) ?? 0,
    reason: typeof raw.reason === 'string' ? raw.reason : '',
    message: typeof raw.message === 'string' ? raw.message : '',
  };
}

function parseList(text: string | undefined): string[] {
  try {
    const v: unknown = JSON.parse(text ?? '[]');
    return Array.isArray(v) ? v.filter((t): t is string => typeof t === 'string') : [];
  } catch {
    return [];
  }
}

function parseWatermarks(text: string | undefined): Record<string, number> {
  try {
    const v: unknown = JSON.parse(text ?? '{}');
    if (typeof v !== 'object' || v === null) return {};
    return Object.fromEntries(
      Object.entries(v).filter((e): e is [string, number] => typeof e[1] === 'number'),
    );
  } catch {
    return {};
  }
}
