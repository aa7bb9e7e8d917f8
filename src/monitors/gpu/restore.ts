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

/**
 * The held finding standing for the Node's condition: its message without the leading "<reason>: " the
 * condition's message gives each finding, so the restored condition reads as before (and again after
 * another restart).
 */
export function restoredFinding(c: Condition): GpuFinding {
  const prefix = `${c.reason}: `;
  const message = c.message.startsWith(prefix) ? c.message.slice(prefix.length) : c.message;
  return { check: 'restored', severity: 'fatal', reason: c.reason, message };
}
