import type { Evidence } from '../../core/evidence.ts';
import type { Condition, ProblemEvent } from '../../core/types.ts';
import { NVML, type Nvml, type NvmlError, type NvmlEvent } from '../../host/nvml/api.ts';
import type { ConditionConfig } from '../../rules/config.ts';
import type { MonitorDeps } from '../deps.ts';
import type { Gpu, GpuCheck, GpuFinding } from './check.ts';
import { interpretEvent } from './events.ts';
import { NodeGpuCapacity } from './expected-count.ts';
import type { GpuMetrics } from './metrics.ts';
import { nvidiaGpusOnBus } from './pci-bus.ts';
import {
  type ActiveCheck,
  CheckStates,
  countLostFinding,
  lostFinding,
  type Poll,
  runChecks,
} from './poller.ts';
import { restoredFindings } from './restore.ts';
import { answered, fatalFindings, slotKey } from './slots.ts';
import { FALLEN_OFF_BUS, type GpuMonitorConfig } from './schema.ts';
import { GpuCondition, judge, WarningTracker } from './verdict.ts';

/** Codes after which the NVML session is no use: the monitor shuts it down and inits again. */
export const REINIT: ReadonlySet<number> = new Set([
  NVML.UNINITIALIZED,
  NVML.DRIVER_NOT_LOADED,
  NVML.LIB_RM_VERSION_MISMATCH,
  NVML.UNKNOWN,
]);

/** Distinct check faults remembered as logged; past this the memory starts again (a bound, not a rule). */
const MAX_LOGGED_FAULTS = 64;

export interface CycleResult {
  readonly events: readonly ProblemEvent[];
  /** NVML failed in a way only a new session can fix. */
  readonly reinit?: NvmlError;
  readonly pollNow?: boolean;
}

/**
 * One NVML session's polls and events turned into GPUUnhealthy, Warning events and metrics. Fatal Xids
 * and lost GPUs are kept for the agent's life (the node's boot, as the kernel-log rule holds them):
 * a GPU that fell off the bus or needs a reset does not heal while the node runs.
 */
export class GpuPoller {
  private readonly config: GpuMonitorConfig;
  private readonly deps: MonitorDeps;
  private readonly metrics: GpuMetrics;
  private readonly evidence: Evidence;
  private readonly checks: readonly ActiveCheck[];
  private readonly gpuCondition: GpuCondition;
  private readonly warnings = new WarningTracker();
  private readonly states = new CheckStates();
  /** Fatal findings that hold until reboot, one per GPU and reason, in arrival order. */
  private readonly sticky = new Map<string, GpuFinding>();
  private nvml: Nvml | undefined;
  /** The GPUs still answering; `all` keeps the lost ones too, for their metrics. */
  private gpus: readonly Gpu[] = [];
  private all: readonly Gpu[] = [];
  private problems: string[] = [];
  /**
   * The last poll's fatal check findings by slot (check and GPU): a check without an answer keeps what it
   * held, and an event between polls keeps them all in the condition (lastFatal).
   */
  private slotFatal = new Map<string, readonly GpuFinding[]>();
  /** Check faults already logged: a check failing every poll logs once per distinct error. */
  private readonly loggedFaults = new Set<string>();
  /** device-count's `expectedCountFrom: node`; undefined when not asked for. */
  private readonly nodeCapacity: NodeGpuCapacity | undefined;

  constructor(
    config: GpuMonitorConfig,
    deps: MonitorDeps,
    metrics: GpuMetrics,
    evidence: Evidence,
    checks: readonly GpuCheck[],
  ) {
    this.config = config;
    this.deps = deps;
    this.metrics = metrics;
    this.evidence = evidence;
    this.checks = checks
      .filter((c) => config.checks[c.name]?.enabled === true)
      .map((check) => ({
        check,
        options: config.checks[check.name]?.options,
      }));
    metrics.checksEnabled(this.checks.map((c) => c.check.name));
    this.gpuCondition = new GpuCondition(config.conditions[0] as ConditionConfig, evidence, deps.clock.now());
    const count = config.checks['device-count'];
    const options = (count?.enabled ? count.options : {}) as {
      expectedCount?: number;
      expectedCountFrom?: string;
    };
    if (options.expectedCount !== undefined) metrics.expectedCount('config', options.expectedCount);
    if (options.expectedCountFrom === 'node')
      this.nodeCapacity = new NodeGpuCapacity(deps.nodeCapacity, deps.logger, config.source);
  }

  /** A new NVML session: its GPUs (the lost ones held as fallen off the bus) and fresh check memory. */
  begin(nvml: Nvml, gpus: readonly Gpu[], lost: readonly Gpu[]): void {
    this.nvml = nvml;
    this.gpus = gpus;
    this.all = [...gpus, ...lost].sort((a, b) => a.index - b.index);
    this.states.clear();
    this.slotFatal.clear();
    this.problems = [];
    for (const g of lost) this.hold(lostFinding(g, 'NVML answered GPU_IS_LOST', FALLEN_OFF_BUS));
  }

  /**
   * A node-wide call answered GPU_IS_LOST: a GPU fell off the bus, held as the per-GPU ones are (not a
   * failing NVML, so no Unknown). `enumerated`: the GPUs still answering; at start, the last session's.
   */
  countLost(error: NvmlError, onBus: readonly string[] | undefined, enumerated = this.all): void {
    this.metrics.nvmlError(error.call, error.code);
    this.hold(countLostFinding(error, onBus, enumerated, FALLEN_OFF_BUS));
  }

  condition(): Condition {
    return this.gpuCondition.get();
  }

  /** The Node's True condition from before the agent restarted, held as NVML's events raised it. */
  restore(c: Condition): void {
    for (const f of restoredFindings(c)) this.sticky.set(`restored\u0000${f.reason}: ${f.message}`, f);
    this.gpuCondition.restore(c);
  }

  /** Why the last poll had no full verdict, for health; undefined when it had one. */
  problem(): string | undefined {
    return this.problems.length > 0 ? this.problems.join('; ') : undefined;
  }

  noteProblem(why: string): void {
    this.problems.push(why);
  }

  poll(): CycleResult {
    const nvml = this.nvml;
    if (!nvml) return { events: [] };
    const now = this.deps.clock.now();
    const nodeGpuCapacity = this.nodeCapacity?.read();
    if (this.nodeCapacity) this.metrics.expectedCount('node', nodeGpuCapacity);
    const p = runChecks({
      nvml,
      checks: this.checks,
      gpus: this.gpus,
      now,
      paths: this.deps.paths,
      states: this.states,
      nodeGpuCapacity,
    });
    for (const g of p.lost) this.hold(lostFinding(g, 'NVML answered GPU_IS_LOST', FALLEN_OFF_BUS));
    const lost = new Set(p.lost.map((g) => g.index));
    this.gpus = this.gpus.filter((g) => !lost.has(g.index));
    for (const e of p.nodeLost) this.countLost(e, nvidiaGpusOnBus(this.deps.paths.sys), this.gpus);
    for (const e of p.errors) this.metrics.nvmlError(e.error.call, e.error.code);
    this.noteFaults(p);
    const reinit = p.errors.find((e) => REINIT.has(e.error.code));
    if (reinit) return { events: [], reinit: reinit.error };
    this.problems = [
      ...p.errors.map((e) => `${where(e)}: ${e.error.message}`),
      ...p.faults.map((f) => `${where(f)}: ${f.fault}`),
    ];
    this.slotFatal = fatalFindings(p.slots, this.slotFatal);
    const fatal = [...this.sticky.values(), ...this.lastFatal()];
    const events = this.conclude(fatal, this.problems, now);
    events.push(...this.newWarnings(p, now));
    this.publishGpus(p, fatal);
    return { events };
  }

  /** NVML failed: Unknown, unless a held fatal finding keeps the condition True. */
  unknown(why: string): ProblemEvent[] {
    this.nvml = undefined;
    this.slotFatal.clear();
    this.metrics.forgetGpus();
    return this.conclude([...this.sticky.values()], [why], this.deps.clock.now());
  }

  onEvent(e: NvmlEvent): CycleResult {
    const now = this.deps.clock.now();
    const sbeStorm = this.config.checks['sbe-storm']?.enabled === true;
    // `all`: an Xid of a GPU already lost still names it.
    const out = interpretEvent(e, { gpus: this.all, now, evidence: this.evidence, sbeStorm });
    this.metrics.event(out.kind);
    if (!this.all.some((g) => g.index === e.index)) this.metrics.unattributedEvent();
    const events: ProblemEvent[] = out.event ? [out.event] : [];
    if (out.event?.reason && !out.event.occurrence) this.count([out.event.reason]);
    if (out.sticky) {
      this.hold(out.sticky);
      events.push(...this.conclude([...this.sticky.values(), ...this.lastFatal()], [], now, true));
    }
    return { events, ...(out.pollNow ? { pollNow: true } : {}) };
  }

  /** The last poll's fatal check findings, those of a slot without an answer kept (fatalFindings). */
  private lastFatal(): GpuFinding[] {
    return [...this.slotFatal.values()].flat();
  }

  /** A check's own fault: counted each time, logged once per distinct error; NVML is not to blame. */
  private noteFaults(p: Poll): void {
    for (const f of p.faults) {
      this.metrics.checkError(f.check);
      const text = `${where(f)}: ${f.fault}`;
      if (this.loggedFaults.has(text)) continue;
      if (this.loggedFaults.size >= MAX_LOGGED_FAULTS) this.loggedFaults.clear();
      this.loggedFaults.add(text);
      this.deps.logger.warn(
        { source: this.config.source, check: f.check },
        `GPU check failed on its own, not NVML: ${text}; that check has no verdict until it answers`,
      );
    }
  }

  private hold(f: GpuFinding): void {
    const key = `${f.gpu?.index ?? 'node'}\u0000${f.reason}`;
    if (!this.sticky.has(key)) this.sticky.set(key, f);
  }

  /** Applies a verdict; `onlyRaise`: an event between polls may raise the condition, never clear it. */
  private conclude(
    fatal: readonly GpuFinding[],
    unanswered: readonly string[],
    now: number,
    onlyRaise = false,
  ): ProblemEvent[] {
    const verdict = judge(fatal, unanswered);
    if (onlyRaise && verdict.status !== 'True') return [];
    const change = this.gpuCondition.apply(verdict, now);
    const c = this.gpuCondition.get();
    if (this.config.metricsReporting) {
      const counted = change && c.status === 'True' ? [c.reason] : [];
      this.deps.problemMetrics.apply({
        counted,
        gauges: [{ type: c.type, reason: c.reason, active: c.status === 'True' }],
      });
    }
    return change ? [change] : [];
  }

  private newWarnings(p: Poll, now: number): ProblemEvent[] {
    const slots = new Map<string, GpuFinding[] | undefined>();
    for (const s of p.slots) {
      const warnings = s.result.findings.filter((f) => f.severity === 'warning');
      slots.set(slotKey(s), answered(s) ? warnings : undefined);
    }
    const fresh = this.warnings.appeared(slots);
    this.count(fresh.map((f) => f.reason));
    return fresh.map((f) => ({
      severity: 'warn',
      timestamp: now,
      reason: f.reason,
      message: f.message,
      evidence: this.evidence,
    }));
  }

  private count(reasons: readonly string[]): void {
    if (this.config.metricsReporting && reasons.length > 0)
      this.deps.problemMetrics.apply({ counted: reasons, gauges: [] });
  }

  private publishGpus(p: Poll, fatal: readonly GpuFinding[]): void {
    for (const g of this.all) {
      const counts = new Map<string, { fatal: number; warning: number }>();
      const values: Record<string, number> = {};
      // A faulted check's gauges keep their last value: it read nothing this poll.
      for (const s of p.slots.filter((x) => x.gpu?.index === g.index && x.result.fault === undefined)) {
        const n = { fatal: 0, warning: 0 };
        for (const f of s.result.findings) n[f.severity]++;
        counts.set(s.check, n);
        Object.assign(values, s.result.gauges ?? {});
      }
      this.metrics.gpu(
        g,
        fatal.some((f) => f.gpu?.index === g.index),
        counts,
        values,
      );
    }
  }
}

/** "row-remap on GPU 1", "device-count". */
function where(x: { readonly check: string; readonly gpu?: Gpu | undefined }): string {
  return `${x.check}${x.gpu ? ` on GPU ${x.gpu.index}` : ''}`;
}
