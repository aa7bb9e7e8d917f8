import { NVML } from '../../host/nvml/api.ts';
import type { GpuFinding } from './check.ts';
import type { Slot } from './poller.ts';

/** One check on one GPU (or node-wide): what its findings are remembered by between polls. */
export function slotKey(s: Slot): string {
  return `${s.check}\u0000${s.gpu?.index ?? 'node'}`;
}

/** The check gave a verdict this poll: no fault of its own, and no NVML error but NOT_SUPPORTED. */
export function answered(s: Slot): boolean {
  if (s.result.fault !== undefined) return false;
  return s.result.error === undefined || s.result.error.code === NVML.NOT_SUPPORTED;
}

/**
 * Each slot's fatal findings this poll. A slot without a verdict that found nothing fatal keeps what it
 * held: an error is no clear, and a True that went Unknown for one poll would move lastTransitionTime,
 * which repair controllers time their grace periods from.
 */
export function fatalFindings(
  slots: readonly Slot[],
  held: ReadonlyMap<string, readonly GpuFinding[]>,
): Map<string, readonly GpuFinding[]> {
  const next = new Map<string, readonly GpuFinding[]>();
  for (const s of slots) {
    const key = slotKey(s);
    const own = s.result.findings.filter((f) => f.severity === 'fatal');
    next.set(key, answered(s) || own.length > 0 ? own : (held.get(key) ?? []));
  }
  return next;
}
