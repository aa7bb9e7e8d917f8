import { backoffMs, RetrySleeper } from '../../core/backoff.ts';
import type { Clock } from '../../core/clock.ts';
import { EVENT, type EventSet, NVML, type Nvml, NvmlError, type NvmlEvent } from '../../host/nvml/api.ts';
import type { Gpu } from './check.ts';

/** One wait's bound: stop() ends the loop within it (gpu.md section 0: 1 s, TIMEOUT when nothing came). */
export const WAIT_MS = 1000;
/** After a wait error, the pause before the next wait doubles from 1 s to 60 s, so a lost GPU cannot spin. */
const ERROR_BACKOFF_MS = [1000, 60_000] as const;

export interface WatcherHooks {
  event(e: NvmlEvent): void;
  /** The wait answered GPU_IS_LOST (it does not say which GPU) or another error. */
  waitFailed(error: NvmlError): void;
  /** A call failed while registering (the check still runs; only NVML's events of that GPU are missed). */
  callFailed(error: NvmlError, gpu: Gpu): void;
}

/**
 * NVML's event wait, off the event loop: the binding runs nvmlEventSetWait_v2 on a libuv pool thread,
 * WAIT_MS at a time, so the agent stays responsive and stop() returns within one wait. Registers, per
 * GPU, only the types it supports (k8s-device-plugin internal/rm/health.go: passing unsupported bits
 * fails the call); a GPU that supports none (NOT_SUPPORTED: too old to health-check) is skipped.
 */
export class EventWatcher {
  private readonly nvml: Nvml;
  private readonly hooks: WatcherHooks;
  private readonly sleeper: RetrySleeper;
  private set: EventSet | undefined;
  private loop: Promise<void> | undefined;
  private stopping = false;
  /** GPUs registered, for health: a GPU whose events NVML cannot give is named there. */
  registered = 0;

  constructor(nvml: Nvml, clock: Clock, hooks: WatcherHooks) {
    this.nvml = nvml;
    this.hooks = hooks;
    this.sleeper = new RetrySleeper(clock);
  }

  /** Registers `wanted` on every GPU and starts waiting; an error creating the set is returned. */
  start(gpus: readonly Gpu[], wanted: number): NvmlError | undefined {
    if (wanted === 0) return undefined;
    const set = this.nvml.eventSetCreate();
    if (set instanceof NvmlError) return set;
    this.set = set;
    for (const gpu of gpus) if (this.register(gpu, wanted, set)) this.registered++;
    if (this.registered === 0) return undefined;
    this.loop = this.run(set);
    return undefined;
  }

  /** Ends the loop (within one wait) and frees the set. Idempotent. */
  async stop(): Promise<void> {
    this.stopping = true;
    this.sleeper.stop();
    await this.loop;
    this.loop = undefined;
    if (this.set) this.nvml.eventSetFree(this.set);
    this.set = undefined;
  }

  private register(gpu: Gpu, wanted: number, set: EventSet): boolean {
    const supported = this.nvml.supportedEventTypes(gpu.handle);
    if (supported instanceof NvmlError) {
      if (supported.code !== NVML.NOT_SUPPORTED) this.hooks.callFailed(supported, gpu);
      return false;
    }
    const mask = wanted & supported;
    if (mask === 0) return false;
    const r = this.nvml.registerEvents(gpu.handle, mask, set);
    if (r instanceof NvmlError) {
      if (r.code !== NVML.NOT_SUPPORTED) this.hooks.callFailed(r, gpu);
      return false;
    }
    return true;
  }

  private async run(set: EventSet): Promise<void> {
    let failures = 0;
    while (!this.stopping) {
      const r = await this.nvml.eventWait(set, WAIT_MS);
      if (this.stopping) return;
      if (!(r instanceof NvmlError)) {
        failures = 0;
        this.hooks.event(r);
        continue;
      }
      if (r.code === NVML.TIMEOUT) {
        failures = 0;
        continue;
      }
      failures++;
      this.hooks.waitFailed(r);
      await this.sleeper.sleep(backoffMs(failures, ...ERROR_BACKOFF_MS));
    }
  }
}

/** The event types the monitor asks for, by which checks are on. */
export function wantedEvents(xid: boolean, sbeStorm: boolean, ecc: boolean): number {
  let mask = 0;
  if (xid) mask |= EVENT.XID_CRITICAL | EVENT.GPU_UNAVAILABLE | EVENT.GPU_RECOVERY_ACTION;
  if (sbeStorm) mask |= EVENT.SBE_STORM;
  if (ecc) mask |= EVENT.DOUBLE_BIT_ECC;
  return mask;
}
