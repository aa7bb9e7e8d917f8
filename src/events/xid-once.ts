import type { Counter, Registry } from 'prom-client';
import type { Clock } from '../core/clock.ts';
import { counter } from '../core/metrics.ts';
import type { ProblemEvent, XidOccurrence } from '../core/types.ts';

/**
 * How far apart two sources' reports of one Xid may be (their events' own times, and their arrival).
 * On a real H200 the kernel-log line and NVML's event arrived 6 ms apart (issue 40's GPU reference,
 * gpu.md §0, measured); 10 s leaves room for a busy node's late read without taking a later Xid of the
 * same code on the same GPU for the same one.
 */
export const XID_WINDOW_MS = 10_000;

/**
 * NVIDIA's Xid catalog lists every code from 1 to 172 (the unused ones and 162-172, which have no
 * resolution bucket yet, included; docs.nvidia.com/deploy/xid-errors/analyzing-xid-catalog.html). Each
 * is a label of its own; any other is `other`, so a driver or a forged line cannot grow the series.
 */
const CATALOG_LAST_XID = 172;
/** NVML's event data for an Xid it cannot name (nvml.h nvmlEventData_t.eventData: 999, unknown Xid; gpu.md §2.2). */
const UNKNOWN_XID = 999;
/** Occurrences remembered for matching; beyond this (an Xid storm) the oldest are forgotten first. */
const MAX_REMEMBERED = 1024;

/** The label of an Xid code in npd_gpu_xid_total. */
export function xidCodeLabel(code: number): string {
  if (code === UNKNOWN_XID) return 'unknown';
  return Number.isInteger(code) && code >= 1 && code <= CATALOG_LAST_XID ? String(code) : 'other';
}

interface Passed {
  readonly source: string;
  readonly occurrence: XidOccurrence;
  /** The event's own time, as its source stamped it. */
  readonly at: number;
  /** When it passed, on the agent's clock: it is forgotten a window later. */
  readonly seen: number;
  /** Another source's report of it was dropped already; a second one is a new occurrence. */
  matched: boolean;
}

export interface XidOnceOptions {
  readonly clock: Clock;
  readonly registry: Registry;
  readonly windowMs?: number;
}

/**
 * One event per Xid occurrence, whichever source sees it first (issue 40: the kernel log and NVML's
 * event wait both report each Xid). An Xid event is dropped when another source passed the same
 * (bus id, code) within the window and that one was not matched yet; repeats from one source are each
 * an occurrence of their own and all pass. Pure and synchronous: the clock only ages the memory.
 */
export class XidOnce {
  private readonly clock: Clock;
  private readonly windowMs: number;
  private readonly passed: Passed[] = [];
  private readonly registry: Registry;
  /** Created with the first Xid: a node without GPUs exports no GPU series (docs/metrics.md). */
  private metrics: XidMetrics | undefined;

  constructor(opts: XidOnceOptions) {
    this.clock = opts.clock;
    this.registry = opts.registry;
    this.windowMs = opts.windowMs ?? XID_WINDOW_MS;
  }

  /** The events to pass on: all but the Xid events another source already reported. */
  filter(source: string, events: readonly ProblemEvent[]): readonly ProblemEvent[] {
    if (!events.some((e) => e.occurrence !== undefined)) return events;
    const now = this.clock.now();
    this.forget(now);
    return events.filter((e) => e.occurrence === undefined || this.first(source, e, e.occurrence, now));
  }

  /** Whether the event is the first report of its occurrence; remembers or counts it. */
  private first(source: string, event: ProblemEvent, o: XidOccurrence, now: number): boolean {
    const twin = this.passed.find(
      (p) =>
        !p.matched &&
        p.source !== source &&
        p.occurrence.code === o.code &&
        p.occurrence.busId === o.busId &&
        Math.abs(p.at - event.timestamp) <= this.windowMs,
    );
    this.metrics ??= xidMetrics(this.registry);
    if (twin) {
      twin.matched = true;
      this.metrics.duplicates.inc({ source });
      return false;
    }
    this.passed.push({ source, occurrence: o, at: event.timestamp, seen: now, matched: false });
    if (this.passed.length > MAX_REMEMBERED) this.passed.shift();
    this.metrics.total.inc({ code: xidCodeLabel(o.code) });
    return true;
  }

  /** Drops what passed more than a window ago: no later report can be its twin. */
  private forget(now: number): void {
    let stale = 0;
    while (stale < this.passed.length && (this.passed[stale] as Passed).seen + this.windowMs < now) stale++;
    if (stale > 0) this.passed.splice(0, stale);
  }
}

interface XidMetrics {
  readonly total: Counter<'code'>;
  readonly duplicates: Counter<'source'>;
}

function xidMetrics(registry: Registry): XidMetrics {
  return {
    total: counter(registry, {
      name: 'npd_gpu_xid_total',
      help: 'NVIDIA Xid occurrences, each counted once whichever source (kernel log, NVML) reported it first.',
      labelNames: ['code'],
    }),
    duplicates: counter(registry, {
      name: 'npd_gpu_xid_duplicates_total',
      help: 'Xid events dropped because another source had already reported the same Xid of the same GPU.',
      labelNames: ['source'],
    }),
  };
}

/** An events outlet that hands each batch to `outlets` without the Xid events XidOnce drops. */
export function xidOnceOutlet(
  stage: XidOnce,
  outlets: readonly ((source: string, events: readonly ProblemEvent[]) => void)[],
): (source: string, events: readonly ProblemEvent[]) => void {
  return (source, events) => {
    const kept = stage.filter(source, events);
    for (const outlet of outlets) outlet(source, kept);
  };
}
