/**
 * How the NVML monitor classifies an Xid it receives from nvmlEventSetWait: the same partition as
 * rules/gpu.yaml (NVIDIA's Xid catalog, "immediate action" per code, as embedded by NVIDIA/NVSentinel
 * health-monitors/syslog-health-monitor/pkg/common/Xid-Catalog.xlsx; the crosswalk is in docs/rules.md),
 * so an Xid gives the same event reason and the same GPUUnhealthy verdict whichever source saw it.
 * test/unit/monitors/gpu/xid-catalog.test.ts checks every code against the rules of rules/gpu.yaml.
 */

/**
 * Codes whose action is a GPU reset, a reboot, a replacement, contact support or check the mechanicals:
 * GPUUnhealthy True until the node reboots, reason NvidiaXID<n>Error (the EKS node monitoring agent's,
 * aws/eks-node-monitoring-agent pkg/reasons/reasons.yaml).
 */
const FATAL: ReadonlySet<number> = new Set([
  46, 48, 54, 61, 62, 64, 74, 79, 95, 109, 110, 119, 120, 123, 136, 140, 142, 143, 151, 155, 156, 158,
]);

/**
 * Codes rules/gpu.yaml gives an event of their own (reason NVRMXid<n>); every other code shares the
 * catch-all reason NVRMXid. 149 and 154 are decided by text the kernel line carries and the NVML event
 * does not (149's NVLink5 sub-code; 154's new recovery action, which the recovery-action check reads
 * from NVML field 230 instead): from NVML they are events only.
 */
const OWN_EVENT: ReadonlySet<number> = new Set([...FATAL, 13, 31, 43, 45, 63, 92, 94, 149, 154]);

/** nvmlEventData_t.eventData 999: the driver reported an Xid NVML could not name (nvml.h). */
export const UNKNOWN_XID = 999;

/** NVIDIA's short names of the common codes (docs.nvidia.com/deploy/xid-errors), for messages. */
const NAMES: Readonly<Record<number, string>> = {
  13: 'Graphics Engine Exception',
  31: 'GPU memory page fault',
  43: 'GPU stopped processing',
  45: 'Preemptive cleanup, due to previous errors',
  48: 'Double Bit ECC Error',
  61: 'Internal micro-controller breakpoint/warning',
  62: 'Internal micro-controller halt',
  63: 'ECC page retirement or row remapping recording event',
  64: 'ECC page retirement or row remapper recording failure',
  74: 'NVLink Error',
  79: 'GPU has fallen off the bus',
  92: 'High single-bit ECC error rate',
  94: 'Contained ECC error',
  95: 'Uncontained ECC error',
  119: 'GSP RPC timeout',
  120: 'GSP error',
  140: 'ECC error escaped containment',
  143: 'GPU initialization failure',
  154: 'GPU recovery action changed',
};

export interface XidClass {
  /** The event reason, as rules/gpu.yaml's kernel-log rule gives it. */
  readonly eventReason: string;
  /** GPUUnhealthy's reason while it holds; undefined for an event-only code. */
  readonly conditionReason: string | undefined;
  /** "Xid 79 (GPU has fallen off the bus)", or "unknown Xid (999)". */
  readonly label: string;
}

export function classifyXid(code: number): XidClass {
  const name = NAMES[code];
  const label =
    code === UNKNOWN_XID ? `unknown Xid (${code})` : name ? `Xid ${code} (${name})` : `Xid ${code}`;
  return {
    eventReason: OWN_EVENT.has(code) ? `NVRMXid${code}` : 'NVRMXid',
    conditionReason: FATAL.has(code) ? `NvidiaXID${code}Error` : undefined,
    label,
  };
}

/** The codes with an event reason of their own, for the subsystem table (schema.ts). */
export function ownEventCodes(): number[] {
  return [...OWN_EVENT].sort((a, b) => a - b);
}

export function isFatalXid(code: number): boolean {
  return FATAL.has(code);
}
