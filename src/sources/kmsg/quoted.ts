import type { QuotedSpan } from '../../core/types.ts';

/**
 * The kernel formats that quote text a user-space process chose (docs/rules.md, "Who wrote the text"):
 * a process name (`comm`, set by exec from the file name or by prctl(PR_SET_NAME), up to 15 bytes) or
 * a file name (`%pD`, any bytes but "/"). An unprivileged program named `general protection fault
 * [#1]` that writes to address 0 makes the kernel print that name in its segfault report; these spans
 * are what no rule may take as evidence.
 *
 * Each entry: a cheap test that gates the regex (most records fail it), and a regex whose capture
 * groups are the quoted spans. A name that comes first is matched lazily up to a fixed header longer
 * than any process name (15 bytes); a name before the kernel's fixed tail is matched greedily, so it
 * takes the last place the tail fits, and the tail is printed after the name: a name that imitates
 * the header or the tail stays inside its span.
 */
interface Format {
  readonly gate: (text: string) => boolean;
  /** With the `d` flag: the groups' offsets are the spans. */
  readonly re: RegExp;
  /**
   * The gate names the report for certain (a segfault, a hung task): a record it admits that the regex
   * does not parse (a kernel that words it differently) is quoted whole, so it can raise nothing.
   */
  readonly closed?: true;
}

/** print_vma_addr() (mm/memory.c): `" in %pD[%lx,%lx+%lx]"` since 6.1, `" in %s[%lx+%lx]"` before. */
const VMA = String.raw`(?: in (.*)\[[0-9a-f]+(?:,[0-9a-f]+)?\+[0-9a-f]+\])?`;
/** show_signal_msg() (arch/x86/mm/fault.c) ends with `" likely on CPU %d (core %d, socket %d)"`. */
const CPU = String.raw`(?: likely on CPU \d+ \(core \d+, socket \d+\))?`;

const has = (s: string) => (text: string) => text.includes(s);

export const KERNEL_FORMATS: readonly Format[] = [
  // arch/x86/mm/fault.c show_signal_msg(): "%s%s[%d]: segfault at %lx ip %px sp %px error %lx" (comm,
  // pid), then print_vma_addr(KERN_CONT " in ", ip) and the CPU; arch/sparc and others print the same head.
  {
    gate: has(']: segfault at '),
    re: new RegExp(
      String.raw`^(.*?)\[\d+\]: segfault at [0-9a-f]+ ip [0-9a-fx]+ (?:\(rpc [0-9a-fx]+\) )?sp [0-9a-fx]+ error [0-9a-f]+${VMA}${CPU}$`,
      'd',
    ),
    closed: true,
  },
  // arch/x86/kernel/traps.c show_signal(): pr_info("%s[%d] %s%s ip:%lx sp:%lx error:%lx", comm, pid,
  // type, desc, ...) then print_vma_addr(KERN_CONT " in ", ip); pr_fmt "traps: ".
  {
    gate: (t) => t.startsWith('traps: ') && t.includes(' ip:'),
    re: new RegExp(
      String.raw`^traps: (.*?)\[\d+\] [a-z0-9 ]+ ip:[0-9a-f]+ sp:[0-9a-f]+ error:[0-9a-f]+${VMA}${CPU}$`,
      'd',
    ),
    closed: true,
  },
  // arch/arm64/kernel/traps.c arm64_show_signal(): pr_info("%s[%d]: unhandled exception: ", comm, pid),
  // the ESR class and fault name, then print_vma_addr(KERN_CONT " in ", pc).
  {
    gate: has(']: unhandled exception: '),
    re: /^(.*?)\[\d+\]: unhandled exception: (?:.*? in (.*))?/d,
    closed: true,
  },
  // kernel/hung_task.c check_hung_task(): pr_err("INFO: task %s:%d blocked for more than %ld seconds.\n").
  {
    gate: (t) => t.startsWith('INFO: task '),
    re: /^INFO: task (.*):\d+ blocked for more than \d+ seconds\.$/d,
    closed: true,
  },
  // kernel/sched/core.c sched_show_task(): pr_info("task:%-15.15s state:%c", comm, ...) then stack:,
  // pid:, ppid:, flags: (hung-task and sysrq-w dumps).
  { gate: (t) => t.startsWith('task:'), re: /^task:(.*) state:\S /d },
  // kernel/watchdog.c watchdog_timer_fn(): "BUG: soft lockup - CPU#%d stuck for %us! [%s:%d]\n".
  {
    gate: has('BUG: soft lockup - CPU#'),
    re: /BUG: soft lockup - CPU#\d+ stuck for \d+s! \[(.*):\d+\]$/d,
    closed: true,
  },
  // mm/oom_kill.c dump_header(): "%s invoked oom-killer: gfp_mask=%#x(%pGg), order=%d, ..." (comm).
  { gate: has(' invoked oom-killer: '), re: /^(.*) invoked oom-killer: gfp_mask=/d },
  // mm/oom_kill.c __oom_kill_process(): "%s: Killed process %d (%s) total-vm:%lukB, anon-rss:..." (comm).
  { gate: has('Killed process '), re: /Killed process \d+ \((.*)\) total-vm:\d+kB/d, closed: true },
  // mm/oom_kill.c oom_reap_task_mm(): "oom_reaper: reaped process %d (%s), now anon-rss:%lukB, ...".
  { gate: has('reaped process '), re: /reaped process \d+ \((.*)\), now anon-rss:/d },
  // mm/oom_kill.c dump_oom_victim(): "...,task=%s,pid=%d,uid=%d" at the end of the oom-kill: summary.
  { gate: (t) => t.startsWith('oom-kill:'), re: /,task=(.*),pid=-?\d+,uid=\d+$/d },
  // mm/oom_kill.c dump_task(): "[%7d] %5d %5d %8lu %8lu ... %5hd %s\n", the process table, comm last.
  { gate: (t) => t.startsWith('['), re: /^\[ *\d+\](?: +-?\d+){6,} (.*)$/d },
  // lib/dump_stack.c dump_stack_print_info(): "CPU: %d UID: %u PID: %d Comm: %.20s %s%s %s %.*s"
  // (UID since 6.10), the taint flags following: "Not tainted" or "Tainted: ...".
  {
    gate: (t) => t.startsWith('CPU: '),
    re: /^CPU: \d+ (?:UID: \d+ )?PID: \d+ Comm: (.*) (?:Not tainted|Tainted: )/d,
  },
  // fs/ext4/super.c __ext4_error(), __ext4_error_inode(), __ext4_error_file(), __ext4_warning_inode():
  // "...: comm %s: %pV" and "...: comm %s: path %pD: %pV". The name may hold ": ", so everything after
  // "comm " is quoted; the rules take the evidence from the "EXT4-fs error (device %s): %s:%d:" head.
  {
    gate: (t) => t.startsWith('EXT4-fs ') && t.includes(': comm '),
    re: /^EXT4-fs \w+ \([^)]*\): .*?: comm (.*)$/d,
    closed: true,
  },
  // mm/memory-failure.c kill_proc() and kill_procs(): "%#lx: Sending SIGBUS to %s:%d due to hardware
  // memory corruption" and "%#lx: Killing %s:%d due to hardware memory corruption" (pr_fmt "Memory failure: ").
  {
    gate: has(' due to hardware memory corruption'),
    re: /: (?:Sending SIGBUS to|Killing) (.*):\d+ due to hardware memory corruption$/d,
  },
  // fs/exec.c: pr_warn_once("process '%pD4' started with executable stack\n", file).
  { gate: has("' started with executable stack"), re: /^process '(.*)' started with executable stack$/d },
  // kernel/sched/core.c __might_resched(): "in_atomic(): %d, irqs_disabled(): %d, non_block: %d, pid: %d, name: %s".
  { gate: (t) => t.startsWith('in_atomic(): '), re: /, pid: \d+, name: (.*)$/d },
  // kernel/sched/core.c __schedule_bug(): "BUG: scheduling while atomic: %s/%d/0x%08x\n" (comm).
  {
    gate: has('BUG: scheduling while atomic: '),
    re: /BUG: scheduling while atomic: (.*)\/\d+\/0x[0-9a-f]+$/d,
  },
  // NVIDIA driver, open-gpu-kernel-modules src/nvidia/src/kernel/gpu/rc/kernel_rc.c: "NVRM: Xid (PCI:...):
  // %d, pid=%s, name=%s, %s", the name from os_get_current_process_name() (kernel-open/nvidia/
  // os-interface.c: current->comm, at most 15 bytes). The driver's text after it has no fixed start, so
  // the span runs to the last ", " that a name could reach: 15 characters, or 60 where a backslash
  // shows escaped bytes (4 characters each). It may take some of the driver's words, never leave a name's.
  {
    gate: (t) => t.startsWith('NVRM: Xid (') && t.includes(', name='),
    re: /^NVRM: Xid \([^)]*\): \d+, pid=[^,]*, name=(?:(?!.{0,60}\\)(.{0,15}), |(.{0,60}), |(.{0,60})$)/d,
  },
  // fs/drop_caches.c drop_caches_sysctl_handler(): "%s (%d): drop_caches: %d\n" (comm).
  { gate: has('): drop_caches: '), re: /^(.*) \(\d+\): drop_caches: \d+$/d },
  // Last, for the reports not above that start with "%s[%d]" (comm, pid), as every architecture's
  // signal reports do (arch/*/mm/fault.c, arch/*/kernel/traps.c) and arch/x86/kernel/umip.c
  // umip_printk() after its "umip: " prefix: the start of the line up to the first "[<pid>]".
  { gate: has('['), re: /^(.{1,64}?)\[\d+\][: ]/d },
];

/** kernel/audit.c audit_log_n_untrustedstring(): a value quoted "..." (else hex) is the caller's text. */
const AUDIT_VALUE = /="([^"]*)"/g;

/** The quoted spans of a kernel record's text, or undefined when it quotes nothing. */
export function kernelQuotedSpans(text: string): QuotedSpan[] | undefined {
  if (text.startsWith('audit: ')) return auditSpans(text);
  for (const format of KERNEL_FORMATS) {
    if (!format.gate(text)) continue;
    const spans = groupSpans(format.re, text);
    if (spans) return spans.length > 0 ? spans : undefined;
    if (format.closed) return [[0, text.length]];
  }
  return undefined;
}

/** The non-empty groups of a match; a match whose groups are all empty quotes nothing. */
function groupSpans(re: RegExp, text: string): QuotedSpan[] | undefined {
  const m = re.exec(text);
  if (!m) return undefined;
  const spans = (m.indices ?? [])
    .slice(1)
    .filter((s): s is [number, number] => s !== undefined && s[1] > s[0]);
  return spans;
}

function auditSpans(text: string): QuotedSpan[] | undefined {
  const spans: QuotedSpan[] = [];
  for (const m of text.matchAll(AUDIT_VALUE)) {
    const start = (m.index ?? 0) + 2;
    if ((m[1] as string).length > 0) spans.push([start, start + (m[1] as string).length]);
  }
  return spans.length > 0 ? spans : undefined;
}
