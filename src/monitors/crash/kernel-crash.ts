import type { ProblemEvent } from '../../core/types.ts';
import { maskSpans } from '../../rules/untrusted.ts';
import { kernelQuotedSpans } from '../../sources/kmsg/quoted.ts';

export const CRASH_KINDS = ['panic', 'oops', 'hard_lockup'] as const;

export type CrashKind = (typeof CRASH_KINDS)[number];

export interface CrashReport {
  readonly kind: CrashKind;
  readonly event: ProblemEvent;
}

/** The event reasons of a crash that ended an earlier boot, whatever it was read from. */
export const CRASH_REASONS: Readonly<Record<CrashKind, string>> = {
  panic: 'PreviousBootPanic',
  oops: 'PreviousBootOops',
  hard_lockup: 'PreviousBootHardLockup',
};

// The wordings of rules/kernel.yaml (kernel/watchdog.c, kernel/panic.c, lib/bug.c,
// arch/x86/kernel/dumpstack.c __die_header(), arch/x86/mm/fault.c show_fault_oops()).
const HARD_LOCKUP = /Watchdog detected hard LOCKUP on cpu \d+|Kernel panic - not syncing: Hard LOCKUP/;
const PANIC = /Kernel panic - not syncing: /;
const OOPS =
  /kernel BUG at [\w./-]+:\d+!|BUG: unable to handle |BUG: kernel NULL pointer dereference|(?:general protection fault|divide error|invalid opcode|stack segment|double fault|Oops)[^[]*: [0-9a-f]{4} \[#\d+\]/;

/** The line a crash report is named after, and its kind. */
export interface CrashLine {
  readonly kind: CrashKind;
  /** Index into the lines given. */
  readonly index: number;
}

/**
 * The worst crash in kernel log lines, oldest first: the first hard lockup line, else the first
 * panic line, else the first oops line. A hard lockup that panicked is a hard lockup, and an oops
 * that panicked is named after the panic, so an alert sees the outcome. The wordings are searched
 * outside the text a record quotes from user space (sources/kmsg/quoted.ts): a segfault report of a
 * program named `Kernel panic - not syncing: x` is no crash. Pure.
 */
export function worstCrashLine(lines: readonly string[]): CrashLine | undefined {
  const texts = lines.map(kernelText);
  for (const [kind, re] of [
    ['hard_lockup', HARD_LOCKUP],
    ['panic', PANIC],
    ['oops', OOPS],
  ] as const) {
    const index = texts.findIndex((l) => re.test(l));
    if (index >= 0) return { kind, index };
  }
  return undefined;
}

/** The line with the spans it quotes from user space masked. */
function kernelText(line: string): string {
  const spans = kernelQuotedSpans(line);
  return spans ? maskSpans(line, spans) : line;
}
