import type { Evidence } from '../core/evidence.ts';
import { SUBSYSTEM_CONDITIONS } from '../core/polarity.ts';
import type { Condition, Impact, Status, Subsystem } from '../core/types.ts';
import { formatRfc3339Seconds } from '../kube/time.ts';
import type { EventClassification, SubsystemTable } from './subsystem-table.ts';

/** The condition type of each subsystem (KernelReady, ...): defined beside their polarity in core. */
export { SUBSYSTEM_CONDITIONS };

const HEALTHY_REASONS: Readonly<Record<Subsystem, string>> = {
  kernel: 'KernelIsHealthy',
  networking: 'NetworkingIsHealthy',
  storage: 'StorageIsHealthy',
  'container-runtime': 'ContainerRuntimeIsHealthy',
  'accelerated-hardware': 'AcceleratedHardwareIsHealthy',
};

/** The defaults of --subsystem-window and --subsystem-hold, for the agent and replay alike. */
export const SUBSYSTEM_DEFAULTS = { window: '10m', hold: '2m' } as const;

/** Who reported a status: the monitor object in the agent, anything unique per monitor elsewhere. */
export type MonitorKey = object;

const RANK: Readonly<Record<Impact, number>> = { info: 0, warning: 1, fatal: 2 };
/** Distinct (source, reason) events remembered at once; the oldest go first beyond this. */
const MAX_EVENTS = 1024;
const MAX_PROBLEM_MESSAGE = 200;

/** One thing currently wrong, from a True problem condition or a recent event. */
interface Problem extends EventClassification {
  readonly reason: string;
  readonly message: string;
  /**
   * When it was seen: the condition's transition or the event's timestamp, never later than when the
   * agent received it, so a line stamped in the future cannot hold its subsystem until then.
   */
  readonly at: number;
  readonly origin: string;
  /** What raised it (core/evidence.ts); the subsystem condition it decides shows it on /conditions. */
  readonly evidence?: Evidence | undefined;
}

export interface SubsystemHealthOptions {
  readonly table: SubsystemTable;
  /** Events count for this long after their timestamp (--subsystem-window). */
  readonly windowMs: number;
  /**
   * A False condition returns to True only after this long without any problem (--subsystem-hold), so
   * a flapping input neither flips it nor moves lastTransitionTime at its own rate. 0 = no hold.
   */
  readonly holdMs?: number;
  readonly nodeName: string;
  /** Counts events forgotten because too many distinct reasons arrived within one window. */
  readonly onEvicted?: () => void;
}

/**
 * Derives one `<Subsystem>Ready` condition per covered subsystem from the problem conditions and the
 * events of the last window. The worst impact wins: `warning` and `fatal` make it False, `info` never
 * does. The reason is the deciding problem's reason, the message starts with its impact ("fatal: ...").
 * lastTransitionTime moves only when the status flips, so a repair controller's toleration counts
 * from the moment the subsystem went bad. Pure and synchronous: time is passed in.
 */
export class SubsystemHealth {
  private table: SubsystemTable;
  private readonly windowMs: number;
  private readonly holdMs: number;
  private readonly nodeName: string;
  private readonly onEvicted: (() => void) | undefined;
  /**
   * Each monitor's last condition list, keyed by the monitor itself: the main and counter files of
   * one input share a `source` (as NPD's do), and one's status must not replace the other's list.
   */
  private readonly conditions = new Map<MonitorKey, { source: string; list: readonly Condition[] }>();
  private readonly events = new Map<string, Problem>();
  /** Problems read back from the Node at start-up, held for one window unless seen again. */
  private readonly restored = new Map<Subsystem, { condition: Condition; until: number }>();
  private readonly last = new Map<Subsystem, Condition>();
  /** Since when a False subsystem has had no problem: it turns True once the hold has passed. */
  private readonly quietSince = new Map<Subsystem, number>();

  constructor(opts: SubsystemHealthOptions) {
    this.table = opts.table;
    this.windowMs = opts.windowMs;
    this.holdMs = opts.holdMs ?? 0;
    this.nodeName = opts.nodeName;
    this.onEvicted = opts.onEvicted;
  }

  /** The condition types this agent owns with the current table. */
  types(): string[] {
    return [...this.table.covered].map((s) => SUBSYSTEM_CONDITIONS[s]);
  }

  configure(table: SubsystemTable): void {
    this.table = table;
  }

  /**
   * Folds one status of `monitor` in at `now`: its full condition list replaces that monitor's
   * previous one. An event counts from its own timestamp, or from `now` when it claims to be later.
   */
  observe(status: Status, monitor: MonitorKey, now: number): void {
    this.conditions.set(monitor, { source: status.source, list: status.conditions });
    for (const e of status.events) {
      const tag = this.table.event(status.source, e.reason);
      if (!tag) continue;
      const key = `${status.source}\u0000${e.reason}`;
      this.events.delete(key);
      const origin = `event from ${status.source}`;
      const at = Math.min(e.timestamp, now);
      this.events.set(key, {
        ...tag,
        reason: e.reason,
        message: e.message,
        at,
        origin,
        evidence: e.evidence,
      });
      if (this.events.size <= MAX_EVENTS) continue;
      this.events.delete(this.events.keys().next().value as string);
      this.onEvicted?.();
    }
  }

  /** A monitor stopped for good (a reload removed or replaced it): its conditions no longer count. */
  forget(monitor: MonitorKey): void {
    this.conditions.delete(monitor);
  }

  /**
   * Resumes from the Node's own subsystem conditions after a restart: their transition times are
   * kept, and a False one stays False for one window (the events behind it are not replayed).
   */
  restore(conditions: readonly Condition[], now: number): void {
    for (const [subsystem, type] of Object.entries(SUBSYSTEM_CONDITIONS) as [Subsystem, string][]) {
      const c = conditions.find((x) => x.type === type);
      if (!c) continue;
      this.last.set(subsystem, c);
      if (c.status === 'False') this.restored.set(subsystem, { condition: c, until: now + this.windowMs });
    }
  }

  /** The current value of every covered subsystem condition. */
  evaluate(now: number): Condition[] {
    this.expire(now);
    const problems = this.problems();
    return [...this.table.covered].map((subsystem) => {
      const worst = pickWorst(problems.filter((p) => p.subsystem === subsystem));
      const held = worst ? undefined : this.held(subsystem, now);
      const next = held ?? this.render(subsystem, worst, now);
      this.last.set(subsystem, next);
      return next;
    });
  }

  /** When the next event or restored problem leaves the window, or a hold ends: worth evaluating then. */
  nextExpiry(): number | undefined {
    const times = [
      ...[...this.events.values()].map((e) => e.at + this.windowMs),
      ...[...this.restored.values()].map((r) => r.until),
      ...[...this.quietSince.values()].map((t) => t + this.holdMs),
    ];
    return times.length > 0 ? Math.min(...times) : undefined;
  }

  /**
   * The previous False condition, unchanged, while its subsystem has been free of problems for less
   * than the hold; undefined once the hold has passed (or when there is nothing to hold).
   */
  private held(subsystem: Subsystem, now: number): Condition | undefined {
    const prev = this.last.get(subsystem);
    if (!prev || prev.status !== 'False' || this.holdMs <= 0) return undefined;
    const since = this.quietSince.get(subsystem) ?? now;
    this.quietSince.set(subsystem, since);
    return now - since < this.holdMs ? prev : undefined;
  }

  private expire(now: number): void {
    for (const [key, e] of this.events) if (e.at + this.windowMs <= now) this.events.delete(key);
    for (const [s, r] of this.restored) if (r.until <= now) this.restored.delete(s);
  }

  private problems(): Problem[] {
    const out: Problem[] = [];
    for (const { source, list } of this.conditions.values()) {
      for (const c of list) {
        if (c.status !== 'True') continue;
        const tag = this.table.condition(source, c.type, c.reason);
        if (tag)
          out.push({
            ...tag,
            reason: c.reason,
            message: c.message,
            at: c.transition,
            origin: `${c.type}=True`,
            evidence: c.evidence,
          });
      }
    }
    // An event whose holder some monitor reports is that condition's to decide (above), both ways. An
    // Unknown holder (a probe that timed out) cannot decide, so the event counts then.
    const reported = new Set(
      [...this.conditions.values()].flatMap((c) =>
        c.list.filter((x) => x.status !== 'Unknown').map((x) => x.type),
      ),
    );
    for (const e of this.events.values()) if (e.heldBy === undefined || !reported.has(e.heldBy)) out.push(e);
    for (const [subsystem, r] of this.restored) {
      const impact: Impact = r.condition.message.startsWith('fatal:') ? 'fatal' : 'warning';
      out.push({ subsystem, impact, reason: r.condition.reason, message: '', at: -1, origin: 'restored' });
    }
    return out;
  }

  private render(subsystem: Subsystem, worst: Problem | undefined, now: number): Condition {
    const type = SUBSYSTEM_CONDITIONS[subsystem];
    const prev = this.last.get(subsystem);
    const status = worst ? 'False' : 'True';
    this.quietSince.delete(subsystem);
    const transition = prev && prev.status === status ? prev.transition : now;
    if (!worst) {
      const message = `no warning or fatal problem in the last ${formatWindow(this.windowMs)}`;
      return { type, status, transition, reason: HEALTHY_REASONS[subsystem], message };
    }
    if (worst.origin === 'restored') {
      const kept = this.restored.get(subsystem)?.condition;
      if (kept) return { ...kept, transition };
    }
    const since = formatRfc3339Seconds(transition);
    const what = truncate(worst.message, MAX_PROBLEM_MESSAGE);
    const message = `${worst.impact}: ${what} (${worst.origin}); unhealthy since ${since}; details: kubectl events --for node/${this.nodeName}`;
    const condition: Condition = { type, status, transition, reason: worst.reason, message };
    return worst.evidence === undefined ? condition : { ...condition, evidence: worst.evidence };
  }
}

/** Worst impact first; among equals the oldest, so a stream of new events does not flip the reason. */
function pickWorst(problems: readonly Problem[]): Problem | undefined {
  let best: Problem | undefined;
  for (const p of problems) {
    if (RANK[p.impact] < RANK.warning) continue;
    if (!best || RANK[p.impact] > RANK[best.impact] || (p.impact === best.impact && p.at < best.at)) best = p;
  }
  return best;
}

function truncate(text: string, max: number): string {
  return text.length <= max ? text : `${text.slice(0, max - 3)}...`;
}

function formatWindow(ms: number): string {
  return ms % 60_000 === 0 ? `${ms / 60_000}m` : `${ms / 1000}s`;
}
