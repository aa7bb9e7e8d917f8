import type { Condition } from '../../core/types.ts';
import type { GpuFinding } from './check.ts';
import { FALLEN_OFF_BUS } from './schema.ts';
import { isFatalXid } from './xid-catalog.ts';

const XID_REASON = /^NvidiaXID(\d+)Error$/;

/**
 * Whether GPUUnhealthy with this reason is one the monitor holds until reboot and cannot find again
 * after the agent restarts: a fatal Xid arrives once through NVML's event wait and is not replayed, and a
 * GPU that fell off the bus may be gone from NVML's count. The checks' findings (ECC, row remaps, NVLink,
 * recovery action) are read again at the first poll, and clear when a GPU reset ends them, so they are
 * not held over.
 */
export function heldAcrossRestart(reason: string): boolean {
  if (reason === FALLEN_OFF_BUS) return true;
  const xid = XID_REASON.exec(reason);
  return xid !== null && isFatalXid(Number(xid[1]));
}

/** Where a finding's "<reason>: " starts in a condition message findingsMessage (verdict.ts) built. */
const FINDING_START = /; (?=[A-Z][A-Za-z0-9]*: )/;

/**
 * The held findings standing for the Node's condition: the findings its message names whose reasons
 * are held across a restart (another finding, e.g. a pending row remap, is the checks' to find again),
 * each with its message as it was, so the restored condition reads as before, and again after another
 * restart. A message that does not parse stands as one finding under the condition's reason.
 */
export function restoredFindings(c: Condition): GpuFinding[] {
  const found: GpuFinding[] = [];
  for (const part of c.message.split(FINDING_START)) {
    const colon = part.indexOf(': ');
    const reason = part.slice(0, colon);
    if (colon > 0 && heldAcrossRestart(reason)) found.push(restored(reason, part.slice(colon + 2)));
  }
  return found.length > 0 ? found : [restored(c.reason, c.message)];
}

function restored(reason: string, message: string): GpuFinding {
  return { check: 'restored', severity: 'fatal', reason, message };
}
