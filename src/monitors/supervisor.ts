import type { Gauge, Registry } from 'prom-client';
import { backoffMs } from '../core/backoff.ts';
import type { Clock, TimerHandle } from '../core/clock.ts';
import type { Logger } from '../core/logger.ts';
import { counter, gauge, zeroed } from '../core/metrics.ts';
import type { MonitorHealth, Status } from '../core/types.ts';
import type { Monitor } from './monitor.ts';

const BACKOFF_INITIAL_MS = 1000;
const BACKOFF_MAX_MS = 60_000;
/**
 * How often health is read without a /healthz request, so a monitor's down time is measured from its
 * failure (to within this) and not from the first probe after it. A monitor that reports `since` is
 * measured from exactly then.
 */
const HEALTH_SAMPLE_MS = 5000;

interface Entry {
  readonly monitor: Monitor;
  started: boolean;
  failures: number;
  downSince: number | undefined;
  retry: TimerHandle | undefined;
}

/**
 * Starts monitors and keeps them started: a monitor whose start fails is retried with exponential
 * backoff, and one that stays down longer than the backoff cap makes /healthz fail.
 */
export class MonitorSupervisor {
  private readonly entries: Entry[];
  private readonly clock: Clock;
  private readonly logger: Logger;
  private readonly failures;
  private emit: (s: Status, from: Monitor) => void = () => {};
  private sampler: TimerHandle | undefined;

  constructor(monitors: readonly Monitor[], deps: { clock: Clock; logger: Logger; registry: Registry }) {
    this.clock = deps.clock;
    this.logger = deps.logger;
    this.entries = monitors.map((monitor) => ({
      monitor,
      started: false,
      failures: 0,
      downSince: undefined,
      retry: undefined,
    }));
    this.failures = counter(deps.registry, {
      name: 'npd_monitor_failures_total',
      help: 'Monitor start failures; each is retried with backoff.',
      labelNames: ['source'],
    });
    zeroed(this.failures, ...monitors.map((m) => ({ source: m.source })));
    this.registerHealthGauges(deps.registry);
  }

  /** `emit` gets each status with the monitor that reported it. */
  async start(emit: (s: Status, from: Monitor) => void): Promise<void> {
    this.emit = emit;
    await Promise.all(this.entries.map((e) => this.startEntry(e)));
    this.sample();
  }

  async stop(): Promise<void> {
    this.sampler?.cancel();
    this.sampler = undefined;
    for (const e of this.entries) e.retry?.cancel();
    await Promise.all(this.entries.map((e) => e.monitor.stop().catch(() => undefined)));
  }

  monitors(): readonly Monitor[] {
    return this.entries.map((e) => e.monitor);
  }

  /** Starts supervising one more monitor (hot reload). */
  async add(monitor: Monitor): Promise<void> {
    const entry: Entry = { monitor, started: false, failures: 0, downSince: undefined, retry: undefined };
    this.entries.push(entry);
    zeroed(this.failures, { source: monitor.source });
    await this.startEntry(entry);
  }

  /** Stops and forgets a monitor (hot reload). */
  async remove(monitor: Monitor): Promise<void> {
    const i = this.entries.findIndex((e) => e.monitor === monitor);
    if (i < 0) return;
    const [entry] = this.entries.splice(i, 1);
    entry?.retry?.cancel();
    await monitor.stop().catch(() => undefined);
  }

  /** Liveness: false when a monitor has been down for longer than its restart backoff allows. */
  liveness(): { ok: boolean; detail: string } {
    const now = this.clock.now();
    const lines: string[] = [];
    let ok = true;
    for (const e of this.entries) {
      const h = this.observe(e, now);
      const down = e.downSince !== undefined;
      const dead = down && h.waiting !== true && now - (e.downSince ?? now) > BACKOFF_MAX_MS;
      if (dead) ok = false;
      lines.push(`${e.monitor.source}: ${healthState(h, dead)}${h.detail ? ` (${h.detail})` : ''}`);
    }
    return { ok, detail: `${lines.join('\n')}\n` };
  }

  private sample(): void {
    const now = this.clock.now();
    for (const e of this.entries) this.observe(e, now);
    this.sampler = this.clock.setTimeout(() => this.sample(), HEALTH_SAMPLE_MS);
  }

  /** Reads a monitor's health and keeps when it went down: its own `since`, else when first seen down. */
  private observe(e: Entry, now: number): MonitorHealth {
    const h = e.started ? e.monitor.health() : { up: false, healthy: false, detail: 'not started' };
    if (h.up && h.healthy) e.downSince = undefined;
    else e.downSince = Math.min(e.downSince ?? now, h.since ?? now);
    return h;
  }

  private async startEntry(e: Entry): Promise<void> {
    try {
      await e.monitor.start((s) => this.emit(s, e.monitor));
      e.started = true;
      e.failures = 0;
    } catch (err) {
      e.downSince ??= this.clock.now();
      e.failures++;
      this.failures.inc({ source: e.monitor.source });
      const delay = backoffMs(e.failures, BACKOFF_INITIAL_MS, BACKOFF_MAX_MS);
      this.logger.error({ source: e.monitor.source, err, retryInMs: delay }, 'monitor failed to start');
      await e.monitor.stop().catch(() => undefined);
      e.retry = this.clock.setTimeout(() => void this.startEntry(e), delay);
    }
  }

  private registerHealthGauges(registry: Registry): void {
    const sample = (g: Gauge<'source'>, pick: (e: Entry) => boolean) => {
      for (const e of this.entries) g.set({ source: e.monitor.source }, pick(e) ? 1 : 0);
    };
    gauge(registry, {
      name: 'npd_monitor_up',
      help: 'Whether a monitor is running.',
      labelNames: ['source'],
      collect: (g) => sample(g, (e) => e.started && e.monitor.health().up),
    });
    gauge(registry, {
      name: 'npd_monitor_healthy',
      help: "Whether a monitor's last read or probe succeeded.",
      labelNames: ['source'],
      collect: (g) => sample(g, (e) => e.started && e.monitor.health().healthy),
    });
  }
}

/** The word /healthz shows for a monitor. */
function healthState(h: MonitorHealth, dead: boolean): string {
  if (dead) return 'dead';
  if (h.healthy) return 'healthy';
  if (h.waiting) return 'waiting';
  return h.up ? 'degraded' : 'restarting';
}
