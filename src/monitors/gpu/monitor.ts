import { backoffMs } from '../../core/backoff.ts';
import type { TimerHandle } from '../../core/clock.ts';
import type { Evidence } from '../../core/evidence.ts';
import type { Condition, MonitorHealth, ProblemEvent, Status } from '../../core/types.ts';
import { NVML, type Nvml, type NvmlError, type NvmlLoader } from '../../host/nvml/api.ts';
import type { MonitorDeps } from '../deps.ts';
import type { Monitor, MonitorType } from '../monitor.ts';
import type { Gpu, GpuCheck } from './check.ts';
import { startNvml } from './enumerate.ts';
import { withExpectedCount } from './expected-count.ts';
import { GpuMetrics, type GpuMonitorState } from './metrics.ts';
import { nvidiaGpusOnBus } from './pci-bus.ts';
import { GpuPoller, REINIT } from './poll-cycle.ts';
import { heldAcrossRestart } from './restore.ts';
import { type GpuMonitorConfig, gpuConfigKind } from './schema.ts';
import { EventWatcher, wantedEvents } from './watcher.ts';

/** After NVML failed, re-init after 10 s, doubling to 5 min (a driver reload takes about a minute). */
const RETRY_MS = [10_000, 300_000] as const;

/** Where the fix for a failing NVML is written down. */
export const NVML_HELP = 'restart the pod; see docs/troubleshooting.md#nvml-fails-inside-the-pod';

/**
 * GPU health from NVML (issue 40 section 2). Starts NVML through the injected loader, enumerates the
 * GPUs, polls every enabled check each interval and watches NVML's events. Without the library or a
 * GPU it says so once and reports no condition; while NVML fails its condition is Unknown.
 */
export class GpuMonitor implements Monitor {
  readonly source: string;
  private readonly config: GpuMonitorConfig;
  private readonly deps: MonitorDeps;
  private readonly loader: NvmlLoader;
  private readonly metrics: GpuMetrics;
  private readonly evidence: Evidence;
  private readonly poller: GpuPoller;
  private emit: ((s: Status) => void) | undefined;
  private nvml: Nvml | undefined;
  private watcher: EventWatcher | undefined;
  private timer: TimerHandle | undefined;
  private state: GpuMonitorState | 'starting' = 'starting';
  private why = '';
  private since: number | undefined;
  private failures = 0;

  /** `checks`: checks/index.ts's GPU_CHECKS, as the registry passes them. */
  constructor(config: GpuMonitorConfig, deps: MonitorDeps, loader: NvmlLoader, checks: readonly GpuCheck[]) {
    this.source = config.source;
    this.config = config;
    this.deps = deps;
    this.loader = loader;
    this.metrics = new GpuMetrics(deps.registry, config.source);
    this.evidence = { source: config.source, plugin: 'nvml', trust: 'probe' };
    this.poller = new GpuPoller(config, deps, this.metrics, this.evidence, checks);
    if (config.metricsReporting) deps.problemMetrics.initialise(config.rules);
  }

  async start(emit: (status: Status) => void): Promise<void> {
    this.emit = emit;
    this.connect();
  }

  async stop(): Promise<void> {
    this.emit = undefined;
    this.timer?.cancel();
    this.timer = undefined;
    await this.disconnect();
    this.metrics.forgetGpus();
  }

  /**
   * After an agent restart in the same boot: GPUUnhealthy True for a fatal Xid or a lost GPU is held as
   * before, with its lastTransitionTime (restore.ts); the checks' findings are read again at the next poll.
   */
  restore(conditions: readonly Condition[]): void {
    const type = this.poller.condition().type;
    const held = conditions.find(
      (c) => c.type === type && c.status === 'True' && heldAcrossRestart(c.reason),
    );
    if (!held) return;
    this.poller.restore(held);
    // Without a library or a GPU the monitor reports no condition; the held finding waits for NVML.
    if (this.state === 'running' || this.state === 'nvml_failed')
      this.emit?.({ source: this.source, events: [], conditions: [this.poller.condition()] });
  }

  health(): MonitorHealth {
    const up = this.emit !== undefined;
    if (this.state === 'no_library' || this.state === 'no_gpu')
      return { up, healthy: false, waiting: true, detail: this.why };
    if (this.state === 'nvml_failed')
      return {
        up,
        healthy: false,
        detail: this.why,
        ...(this.since !== undefined ? { since: this.since } : {}),
      };
    const problem = this.poller.problem();
    return problem ? { up, healthy: false, detail: problem } : { up, healthy: true };
  }

  /** Loads and starts NVML; on success polls at once and every interval. */
  private connect(): void {
    if (!this.emit) return;
    const nvml = this.nvml ?? this.loader();
    if (nvml instanceof Error) {
      this.waiting('no_library', `no NVML library (${this.config.library}): ${nvml.message}`);
      return;
    }
    this.nvml = nvml;
    const onBus = nvidiaGpusOnBus(this.deps.paths.sys);
    const s = startNvml(nvml, onBus?.length);
    if (s.kind === 'no_gpu') {
      nvml.shutdown();
      this.nvml = undefined;
      this.waiting('no_gpu', `no NVIDIA GPU on this node: ${s.why}`);
    } else if (s.kind === 'failed') {
      // The count (or init) answering GPU_IS_LOST is a GPU fallen off the bus: held True while NVML is
      // started again to watch the others.
      if (s.error.code === NVML.GPU_IS_LOST) this.poller.countLost(s.error, onBus);
      void this.fail(s.error, s.error.code === NVML.GPU_IS_LOST);
    } else this.running(nvml, s.gpus, s.lost);
  }

  private running(nvml: Nvml, gpus: readonly Gpu[], lost: readonly Gpu[]): void {
    this.state = 'running';
    this.failures = 0;
    this.since = undefined;
    this.metrics.setState('running');
    this.poller.begin(nvml, gpus, lost);
    const names = gpus.map((g) => `${g.index}: ${g.name} ${g.uuid}`).join(', ');
    this.deps.logger.info(
      { source: this.source, gpus: gpus.length + lost.length },
      `NVML: ${names || 'no GPU answered'}`,
    );
    this.startWatcher(nvml, gpus);
    this.pollNow();
  }

  private startWatcher(nvml: Nvml, gpus: readonly Gpu[]): void {
    const on = (name: string) => this.config.checks[name]?.enabled === true;
    const watcher = new EventWatcher(nvml, this.deps.clock, {
      event: (e) => this.report(this.poller.onEvent(e)),
      waitFailed: (error) => this.callFailed(error),
      callFailed: (error) => this.callFailed(error),
    });
    const error = watcher.start(gpus, wantedEvents(on('xid'), on('sbe-storm'), on('ecc')));
    if (error) this.callFailed(error);
    this.watcher = watcher;
  }

  /** A failed call outside a poll: GPU_IS_LOST polls now to find which GPU; session errors re-init. */
  private callFailed(error: NvmlError): void {
    this.metrics.nvmlError(error.call, error.code);
    if (REINIT.has(error.code)) return void this.fail(error, true);
    this.poller.noteProblem(error.message);
    if (error.code === NVML.GPU_IS_LOST) this.pollNow();
  }

  private pollNow(): void {
    if (this.state !== 'running' || !this.emit) return;
    this.timer?.cancel();
    const result = this.poller.poll();
    if (result.reinit) return void this.fail(result.reinit, true);
    this.report(result);
    this.timer = this.deps.clock.setTimeout(() => this.pollNow(), this.config.intervalMs);
  }

  private report(r: { events: readonly ProblemEvent[]; pollNow?: boolean }): void {
    if (!this.emit) return;
    if (r.pollNow && this.state === 'running') this.pollNow();
    else this.emit({ source: this.source, events: r.events, conditions: [this.poller.condition()] });
  }

  /** No library or no GPU: nothing to watch here. Said once (and again if why changes); no condition. */
  private waiting(state: 'no_library' | 'no_gpu', why: string): void {
    const again = this.state === state && this.why === why;
    this.state = state;
    this.why = why;
    this.metrics.setState(state);
    if (!again)
      this.deps.logger.info(
        { source: this.source },
        `GPU monitor idle: ${why}; no GPU condition is reported`,
      );
    // Look again each interval: the GPU Operator's driver container may install the library (and load
    // the driver) after this pod started; the binding retries the load until one succeeds.
    this.timer = this.deps.clock.setTimeout(() => this.connect(), this.config.intervalMs);
  }

  /** NVML fails: Unknown (never a guess), unhealthy with the fix, and init again with backoff. */
  private async fail(error: NvmlError, counted = false): Promise<void> {
    if (!this.emit) return;
    if (!counted) this.metrics.nvmlError(error.call, error.code);
    this.metrics.setState('nvml_failed');
    this.failures++;
    this.state = 'nvml_failed';
    this.since ??= this.deps.clock.now();
    this.why =
      error.code === NVML.GPU_IS_LOST
        ? `NVML answers GPU_IS_LOST (${error.message}): a GPU has fallen off the bus; NVML is started again to watch the others`
        : `NVML fails: ${error.message}; the GPUs' health is unknown; ${NVML_HELP}`;
    this.deps.logger.warn({ source: this.source, call: error.call, code: error.code }, this.why);
    this.timer?.cancel();
    const events = this.poller.unknown(this.why);
    this.emit({ source: this.source, events, conditions: [this.poller.condition()] });
    await this.disconnect();
    const delay = backoffMs(this.failures, ...RETRY_MS);
    this.timer = this.deps.clock.setTimeout(() => this.connect(), delay);
  }

  /** Ends the event wait and the NVML session; the next connect starts both afresh. */
  private async disconnect(): Promise<void> {
    const watcher = this.watcher;
    const nvml = this.nvml;
    this.watcher = undefined;
    this.nvml = undefined;
    await watcher?.stop();
    nvml?.shutdown();
  }
}

/**
 * The monitor type, with the NVML loader for a library path (the koffi binding, or a test's fake) and
 * the check list (checks/index.ts), both given by the agent's registry.
 */
export function gpuMonitorType(
  loaderFor: (library: string) => NvmlLoader,
  checks: readonly GpuCheck[],
): MonitorType<GpuMonitorConfig> {
  return {
    configKind: gpuConfigKind(checks),
    create: (config, deps) => {
      const c = withExpectedCount(config, deps.gpuExpectedCount);
      return new GpuMonitor(c, deps, loaderFor(c.library), checks);
    },
  };
}
