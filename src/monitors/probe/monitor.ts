import type { Counter, Histogram, Registry } from 'prom-client';
import type { Clock, TimerHandle } from '../../core/clock.ts';
import { errorMessage } from '../../core/errors.ts';
import type { Logger } from '../../core/logger.ts';
import { counter, histogram } from '../../core/metrics.ts';
import type { MonitorHealth, Status } from '../../core/types.ts';
import type { ProblemMetrics } from '../../metrics/problem-metrics.ts';
import { type ProbeResult, ProbeRuleEngine } from '../../rules/probe-engine.ts';
import type { MonitorDeps } from '../deps.ts';
import type { Monitor, MonitorType } from '../monitor.ts';
import { type ProbeCheck, type ProbeSpec, unknown } from './kind.ts';
import { probeKinds } from './kinds.ts';
import { type ProbeMonitorConfig, probeConfigKind } from './schema.ts';

export interface BuiltProbe {
  readonly spec: ProbeSpec;
  readonly check: ProbeCheck;
}

export interface ProbeMonitorDeps {
  readonly clock: Clock;
  readonly logger: Logger;
  readonly registry: Registry;
  readonly problemMetrics: ProblemMetrics;
  /** [0, 1), for splay; injectable so tests know when each probe runs. */
  readonly random?: () => number;
}

interface Slot {
  readonly probe: BuiltProbe;
  timer: TimerHandle | undefined;
  /** The check still running past its timeout: the next run waits for it rather than pile up. */
  inFlight: Promise<unknown> | undefined;
  latest: readonly ProbeResult[];
  failure: string | undefined;
  readonly streaks: Map<string, number>;
}

type Outcome = { results: ProbeResult[] } | { error: string };

const DURATION_BUCKETS = [0.001, 0.005, 0.01, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30];

/**
 * Runs built-in probes on their intervals and turns their results into conditions through the
 * custom-plugin state machine. Probes that share a condition are merged (NonOK beats Unknown beats
 * OK) from each one's latest results, so they never flip it back and forth.
 */
export class ProbeMonitor implements Monitor {
  readonly source: string;
  private readonly config: ProbeMonitorConfig;
  private readonly deps: ProbeMonitorDeps;
  private readonly slots: Slot[];
  private readonly engine: ProbeRuleEngine;
  private readonly errors: Counter<'source' | 'probe'>;
  private readonly duration: Histogram<'source' | 'probe'>;
  private readonly stopping = new AbortController();
  private emit: ((s: Status) => void) | undefined;
  private running = false;

  constructor(config: ProbeMonitorConfig, probes: readonly BuiltProbe[], deps: ProbeMonitorDeps) {
    this.source = config.source;
    this.config = config;
    this.deps = deps;
    this.slots = probes.map((probe) => ({
      probe,
      timer: undefined,
      inFlight: undefined,
      latest: [],
      failure: undefined,
      streaks: new Map(),
    }));
    this.engine = new ProbeRuleEngine(
      {
        source: config.source,
        conditions: config.conditions,
        evidence: { source: config.source, plugin: 'probe', trust: 'probe' },
      },
      deps.clock.now(),
    );
    this.errors = counter(deps.registry, {
      name: 'npd_probe_errors_total',
      help: 'Probe runs that gave no verdict: the check threw, timed out or returned Unknown.',
      labelNames: ['source', 'probe'],
    });
    this.duration = histogram(deps.registry, {
      name: 'npd_probe_duration_seconds',
      help: 'How long each probe run took.',
      labelNames: ['source', 'probe'],
      buckets: DURATION_BUCKETS,
    });
    if (config.metricsReporting) deps.problemMetrics.initialise(probes.flatMap((p) => p.check.rules));
    for (const p of probes) this.errors.inc({ source: this.source, probe: p.spec.name }, 0);
  }

  async start(emit: (status: Status) => void): Promise<void> {
    this.emit = emit;
    this.running = true;
    emit(this.engine.initialStatus());
    const random = this.deps.random ?? Math.random;
    for (const slot of this.slots) this.schedule(slot, Math.floor(random() * this.config.splayMs));
  }

  async stop(): Promise<void> {
    this.emit = undefined;
    this.running = false;
    for (const slot of this.slots) slot.timer?.cancel();
    this.stopping.abort(new Error('monitor stopped'));
  }

  health(): MonitorHealth {
    const failing = this.slots.filter((s) => s.failure !== undefined);
    const detail = failing.map((s) => `${s.probe.spec.name}: ${s.failure}`).join('; ');
    return { up: this.running, healthy: failing.length === 0, ...(detail ? { detail } : {}) };
  }

  private schedule(slot: Slot, delayMs: number): void {
    if (!this.running) return;
    slot.timer = this.deps.clock.setTimeout(() => void this.run(slot), delayMs);
  }

  private async run(slot: Slot): Promise<void> {
    const { spec } = slot.probe;
    const startedAt = this.deps.clock.now();
    const started = this.deps.clock.hrtime();
    const outcome = slot.inFlight ? { error: 'the previous run has not finished' } : await this.execute(slot);
    if (!this.running) return;
    this.duration.observe(
      { source: this.source, probe: spec.name },
      Number(this.deps.clock.hrtime() - started) / 1e9,
    );
    this.record(slot, outcome);
    this.publish(slot);
    this.schedule(slot, Math.max(0, startedAt + spec.intervalMs - this.deps.clock.now()));
  }

  /** Runs one check under its timeout; the check's own promise is kept until it really settles. */
  private execute(slot: Slot): Promise<Outcome> {
    const { spec, check } = slot.probe;
    const controller = new AbortController();
    const onStop = () => controller.abort(this.stopping.signal.reason);
    this.stopping.signal.addEventListener('abort', onStop, { once: true });
    let timer: TimerHandle | undefined;
    const work = check.check({ signal: controller.signal }).then(
      (results): Outcome => ({ results }),
      (err: unknown): Outcome => ({ error: errorMessage(err) }),
    );
    const inFlight = work.finally(() => {
      timer?.cancel();
      this.stopping.signal.removeEventListener('abort', onStop);
      if (slot.inFlight === inFlight) slot.inFlight = undefined;
    });
    slot.inFlight = inFlight;
    const timedOut = new Promise<Outcome>((resolve) => {
      timer = this.deps.clock.setTimeout(() => {
        controller.abort(new Error(`timed out after ${spec.timeoutMs}ms`));
        resolve({ error: `timed out after ${spec.timeoutMs}ms` });
      }, spec.timeoutMs);
    });
    return Promise.race([work, timedOut]);
  }

  private record(slot: Slot, outcome: Outcome): void {
    const { spec, check } = slot.probe;
    const labels = { source: this.source, probe: spec.name };
    if ('error' in outcome) {
      slot.failure = outcome.error;
      this.errors.inc(labels);
      this.deps.logger.warn({ source: this.source, probe: spec.name, err: outcome.error }, 'probe failed');
      slot.latest = check.rules.map((r) => unknown(r, `probe ${spec.name} failed: ${outcome.error}`));
      return;
    }
    slot.failure = undefined;
    if (outcome.results.some((r) => r.status === 'Unknown')) this.errors.inc(labels);
    slot.latest = outcome.results.map((r) => this.debounce(slot, r)).filter((r) => r !== undefined);
  }

  /** Below failureThreshold consecutive NonOK results the previous verdict stands. */
  private debounce(slot: Slot, r: ProbeResult): ProbeResult | undefined {
    const key = `${r.rule.condition ?? ''}/${r.rule.reason}`;
    const streak = r.status === 'NonOK' ? (slot.streaks.get(key) ?? 0) + 1 : 0;
    slot.streaks.set(key, streak);
    if (r.status !== 'NonOK' || streak >= slot.probe.spec.failureThreshold) return r;
    return slot.latest.find((p) => p.rule.condition === r.rule.condition && p.rule.reason === r.rule.reason);
  }

  private publish(slot: Slot): void {
    const batch: ProbeResult[] = slot.latest.filter((r) => r.rule.type === 'temporary');
    const touched = new Set(
      slot.latest.flatMap((r) => (r.rule.type === 'permanent' && r.rule.condition ? [r.rule.condition] : [])),
    );
    for (const condition of touched) {
      const merged = this.merge(condition);
      if (merged) batch.push(merged);
    }
    const result = this.engine.apply(batch, this.deps.clock.now());
    if (this.config.metricsReporting) this.deps.problemMetrics.apply(result);
    this.emit?.(result.status);
  }

  /** The worst latest result over every probe reporting on `condition`; several problems share one message. */
  private merge(condition: string): ProbeResult | undefined {
    const all = this.slots.flatMap((s) =>
      s.latest.filter((r) => r.rule.type === 'permanent' && r.rule.condition === condition),
    );
    const bad = all.filter((r) => r.status === 'NonOK');
    const first = bad[0];
    if (first) return bad.length === 1 ? first : { ...first, message: bad.map((r) => r.message).join('; ') };
    return all.find((r) => r.status === 'Unknown') ?? all[0];
  }
}

/** Builds the probes of a validated config from the kind list. */
export function buildProbes(
  config: ProbeMonitorConfig,
  deps: Pick<MonitorDeps, 'paths' | 'clock'>,
): BuiltProbe[] {
  const kinds = probeKinds();
  return config.probes.map((spec) => {
    const kind = kinds.find((k) => k.kind === spec.kind);
    if (!kind) throw new Error(`${config.file}: probe kind "${spec.kind}" is not available in this build`);
    return {
      spec,
      check: kind.create(spec, { paths: deps.paths, clock: deps.clock, environment: process.env }),
    };
  });
}

export const probeMonitorType: MonitorType<ProbeMonitorConfig> = {
  configKind: probeConfigKind,
  create: (config, deps) => new ProbeMonitor(config, buildProbes(config, deps), deps),
};
