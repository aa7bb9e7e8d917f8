import { FakeClock } from '../core/clock.ts';
import { silentLogger } from '../core/logger.ts';
import { createRegistry } from '../core/metrics.ts';
import type { Condition, Status, XidOccurrence } from '../core/types.ts';
import { hostPaths } from '../host/paths.ts';
import { ProblemMetrics } from '../metrics/problem-metrics.ts';
import type { MonitorDeps } from '../monitors/deps.ts';
import type { Monitor } from '../monitors/monitor.ts';
import { systemLogMonitorType } from '../monitors/system-log/type.ts';
import type { LogMonitorConfig } from '../rules/config.ts';
import { SourceHub } from '../sources/hub.ts';
import type { ReplayLine } from './parse-input.ts';
import { ReplayFeed } from './source.ts';
import { type ReplaySubsystemOptions, ReplaySubsystems } from './subsystems.ts';

/** One line of replay output; the fields are the contract golden tests and users rely on. */
export interface ReplayRecord {
  /** `subsystem`: a subsystem condition (`--subsystem-conditions`), with source `subsystem`. */
  readonly kind: 'event' | 'condition' | 'subsystem';
  readonly source: string;
  readonly type: string;
  readonly status?: string;
  readonly reason: string;
  readonly message: string;
  readonly timestamp: string;
  /** The Xid an event reports (ProblemEvent.occurrence), as the agent's one-event-per-Xid stage sees it. */
  readonly occurrence?: XidOccurrence;
}

/**
 * Runs monitor configs over recorded lines: the agent's own system-log monitors (skip lists, shared
 * readers and literal scans, recovery ticks) read a replay source, on a clock that jumps to each record's
 * time. No lookback, no delay and no I/O, so the same input always gives the same output. With
 * `subsystems`, the subsystem conditions the agent would publish come out too, including the
 * recoveries that windows and holds bring after the last line.
 */
export function replay(
  configs: readonly LogMonitorConfig[],
  lines: readonly ReplayLine[],
  startMs: number,
  subsystems?: ReplaySubsystemOptions,
): ReplayRecord[] {
  const clock = new FakeClock(startMs);
  const feed = new ReplayFeed();
  const deps = offlineDeps(clock);
  const source = (config: LogMonitorConfig) => feed.source(config);
  const type = systemLogMonitorType({ kmsg: source, journald: source, filelog: source });
  const out: ReplayRecord[] = [];
  const health = subsystems && new ReplaySubsystems(subsystems, (c) => out.push(subsystemRecord(c)));
  const monitors = configs.map((config) => type.create(config, deps));
  for (const monitor of monitors) start(monitor, out, (s) => health?.observe(s, monitor, clock.now()));
  health?.evaluate(clock.now(), true);
  const step = (at: number) => {
    clock.jumpTo(at);
    health?.evaluate(clock.now());
  };
  for (const line of lines) {
    health?.drain(line.timestamp, step);
    clock.jumpTo(line.timestamp);
    feed.push(line);
    health?.evaluate(clock.now());
  }
  health?.drain(Number.POSITIVE_INFINITY, step);
  for (const monitor of monitors) void monitor.stop();
  return out;
}

/** Monitor dependencies with no I/O: a fresh registry, a silent logger, the replay clock. */
function offlineDeps(clock: FakeClock): MonitorDeps {
  const registry = createRegistry();
  return {
    clock,
    logger: silentLogger(),
    registry,
    paths: hostPaths('/'),
    problemMetrics: new ProblemMetrics(registry),
    sources: new SourceHub(),
    // Recorded lines are taken as trusted, as a recorded journal is: replay tests rules, not writers.
    trustFileWriters: true,
  };
}

/** Statuses published while starting are the defaults: they are what later changes compare with. */
function start(monitor: Monitor, out: ReplayRecord[], observe: (s: Status) => void): void {
  const known = new Map<string, Condition>();
  let starting = true;
  void monitor.start((status) => {
    observe(status);
    collect(status, known, starting ? undefined : out);
  });
  starting = false;
}

function subsystemRecord(c: Condition): ReplayRecord {
  const { type, status, reason, message } = c;
  return {
    kind: 'subsystem',
    source: 'subsystem',
    type,
    status,
    reason,
    message,
    timestamp: iso(c.transition),
  };
}

function collect(status: Status, known: Map<string, Condition>, out: ReplayRecord[] | undefined): void {
  const { source } = status;
  for (const e of status.events) {
    const type = e.severity === 'warn' ? 'Warning' : 'Normal';
    out?.push({
      kind: 'event',
      source,
      type,
      reason: e.reason,
      message: e.message,
      timestamp: iso(e.timestamp),
      ...(e.occurrence ? { occurrence: e.occurrence } : {}),
    });
  }
  for (const c of status.conditions) {
    const prev = known.get(c.type);
    known.set(c.type, c);
    if (prev && prev.status === c.status && prev.reason === c.reason && prev.message === c.message) continue;
    out?.push({
      kind: 'condition',
      source,
      type: c.type,
      status: c.status,
      reason: c.reason,
      message: c.message,
      timestamp: iso(c.transition),
    });
  }
}

/** RFC 3339 with second precision when there are no milliseconds, as Kubernetes prints times. */
function iso(ms: number): string {
  const s = new Date(ms).toISOString();
  return s.endsWith('.000Z') ? `${s.slice(0, -5)}Z` : s;
}
