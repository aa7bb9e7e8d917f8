import type { Evidence } from '../../core/evidence.ts';
import type { ProblemEvent } from '../../core/types.ts';
import { EVENT, type NvmlEvent } from '../../host/nvml/api.ts';
import type { Gpu, GpuFinding } from './check.ts';
import { describeGpu, kernelBusId } from './identity.ts';
import type { GpuEventKind } from './metrics.ts';
import { lostFinding } from './poller.ts';
import { FALLEN_OFF_BUS, SBE_STORM } from './schema.ts';
import { classifyXid } from './xid-catalog.ts';

/** What one NVML event means for the monitor. */
export interface EventOutcome {
  readonly kind: GpuEventKind;
  /** A Warning event to report now. */
  readonly event?: ProblemEvent;
  /** A fatal finding that holds GPUUnhealthy True until the node reboots (as the kernel-log rule's). */
  readonly sticky?: GpuFinding;
  /** Poll now: the checks read what the event announced (ECC counts, the recovery action). */
  readonly pollNow?: boolean;
}

export interface EventContext {
  readonly gpus: readonly Gpu[];
  readonly now: number;
  readonly evidence: Evidence;
  readonly sbeStorm: boolean;
}

/**
 * An Xid (XidCriticalError, eventData = the code, 999 = unknown) gives one event per occurrence, with
 * the reason rules/gpu.yaml's kernel-log rule gives and the occurrence (code, PCI bus id as the kernel
 * writes it, UUID) by which the pipeline keeps one event when both sources saw it. A fatal code holds
 * GPUUnhealthy. GpuUnavailableError: the GPU is gone (fallen off the bus). DBE and recovery-action
 * events start a poll, whose checks read the counts and field 230.
 */
export function interpretEvent(e: NvmlEvent, ctx: EventContext): EventOutcome {
  const gpu = ctx.gpus.find((g) => g.index === e.index);
  if (e.eventType & EVENT.XID_CRITICAL) return xid(e.eventData, gpu, ctx);
  if (e.eventType & EVENT.GPU_UNAVAILABLE) {
    const how = 'NVML reported it unavailable (GpuUnavailableError)';
    return gpu
      ? { kind: 'unavailable', sticky: lostFinding(gpu, how, FALLEN_OFF_BUS) }
      : { kind: 'unavailable', pollNow: true };
  }
  if (e.eventType & EVENT.SBE_STORM) {
    if (!ctx.sbeStorm) return { kind: 'sbe_storm' };
    const message = `${gpu ? describeGpu(gpu) : 'a GPU NVML did not name'}: single-bit ECC error storm (NVML SingleBitEccErrorStorm)`;
    return { kind: 'sbe_storm', event: warn(SBE_STORM, message, ctx) };
  }
  if (e.eventType & EVENT.DOUBLE_BIT_ECC) return { kind: 'dbe', pollNow: true };
  if (e.eventType & EVENT.GPU_RECOVERY_ACTION) return { kind: 'recovery_action', pollNow: true };
  return { kind: 'other' };
}

function xid(code: number, gpu: Gpu | undefined, ctx: EventContext): EventOutcome {
  const c = classifyXid(code);
  const where = gpu ? describeGpu(gpu) : 'a GPU NVML did not name';
  const message = `${c.label} on ${where}, from NVML`;
  const occurrence = gpu
    ? { kind: 'xid' as const, code, busId: kernelBusId(gpu.busId), uuid: gpu.uuid }
    : undefined;
  const event = { ...warn(c.eventReason, message, ctx), ...(occurrence ? { occurrence } : {}) };
  if (c.conditionReason === undefined) return { kind: 'xid', event };
  const sticky: GpuFinding = {
    check: 'xid',
    severity: 'fatal',
    reason: c.conditionReason,
    message,
    ...(gpu ? { gpu } : {}),
  };
  return { kind: 'xid', event, sticky };
}

function warn(reason: string, message: string, ctx: EventContext): ProblemEvent {
  return { severity: 'warn', timestamp: ctx.now, reason, message, evidence: ctx.evidence };
}
