/**
 * What raised a problem (issue 38, "Counted and visible"): the monitor, the kind of input it read and
 * how far the text or result that raised it can be trusted. Repair controllers act on conditions, so an
 * operator must be able to see whether the kernel, a system daemon, a log file anyone with write access
 * could append to, or a flag that relaxed the checks stands behind one. It rides on Condition and
 * ProblemEvent; the Node condition written to the API server has no field for it (only /conditions, the
 * Event's annotations and the event sinks show it), so NPD's reason and message stay as they were.
 */

/**
 * The input a problem came from: NPD's log plugins, a built-in probe, a custom plugin script, or the
 * previous boot's crash dump in pstore (the previous boot's journal is `journald`), or the NVIDIA driver's
 * answers through NVML (the GPU monitor: no user program can write them).
 */
export type EvidencePlugin = 'kmsg' | 'journald' | 'filelog' | 'probe' | 'custom' | 'pstore' | 'nvml';

/**
 * - `kernel`: kernel log text outside the spans the kernel quotes from user space (docs/rules.md);
 * - `system-writer`: a journal entry whose journald-stamped fields passed `trustedWriter: system`;
 * - `listed-writer`: a journal entry whose fields matched the config's own trustedWriter list;
 * - `any-writer`: a journald config that says `trustedWriter: any` (who wrote the entry is not checked);
 * - `untrusted-writer`: a journal entry its trustedWriter refused, or a file's line whose config did not
 *   say `trustedWriter: any`: it may give an info event and no more;
 * - `file`: a log file's line under `trustedWriter: any`: no trusted fields at all, whoever can write the
 *   file (or send to the daemon writing it) wrote it;
 * - `probe`: a built-in probe's own measurement; `plugin`: a custom plugin script's exit status;
 * - `trusted-by-flag`: it counted only because --trust-quoted-text, --trust-journal-writers or
 *   --trust-file-writers said so (`flag` names which).
 */
export type EvidenceTrust =
  | 'kernel'
  | 'system-writer'
  | 'listed-writer'
  | 'any-writer'
  | 'untrusted-writer'
  | 'file'
  | 'probe'
  | 'plugin'
  | 'trusted-by-flag';

/** journald's trusted fields of the entry that raised it (systemd.journal-fields(7)); absent ones left out. */
export interface JournalWriter {
  readonly transport?: string;
  readonly unit?: string;
  readonly uid?: string;
  readonly comm?: string;
}

export interface Evidence {
  /** The monitor's source (NPD's `source`, e.g. kernel-monitor). */
  readonly source: string;
  readonly plugin: EvidencePlugin;
  readonly trust: EvidenceTrust;
  /** journald only: who wrote the entry, as journald stamped it. */
  readonly writer?: JournalWriter;
  /** trusted-by-flag only: the flag that made it count. */
  readonly flag?: '--trust-quoted-text' | '--trust-journal-writers' | '--trust-file-writers';
}

/** The Event annotation that names a problem's evidence, as `plugin/trust` (evidenceLabel). */
export const EVIDENCE_ANNOTATION = 'node-problem-detector.io/evidence';
/** journald's trusted fields of the writer: `_SYSTEMD_UNIT=containerd.service _UID=0`. */
export const EVIDENCE_WRITER_ANNOTATION = 'node-problem-detector.io/evidence-writer';
/** The flag that let untrusted text count (trust `trusted-by-flag`). */
export const EVIDENCE_FLAG_ANNOTATION = 'node-problem-detector.io/evidence-flag';

/** The short form an Event annotation carries: `kmsg/kernel`, `journald/system-writer`. */
export function evidenceLabel(e: Evidence): string {
  return `${e.plugin}/${e.trust}`;
}
