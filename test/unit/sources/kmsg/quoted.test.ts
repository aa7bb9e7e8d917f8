/**
 * The catalogue of kernel formats that quote user-chosen text (src/sources/kmsg/quoted.ts): for each, a
 * real record with exactly the name(s) marked, and a look-alike (the same words, not that format) with
 * nothing marked, so the kernel's own words stay evidence.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { kernelQuotedSpans } from '../../../../src/sources/kmsg/quoted.ts';

/** The quoted texts of a record, in order. */
function quoted(text: string): string[] {
  return (kernelQuotedSpans(text) ?? []).map(([s, e]) => text.slice(s, e));
}

interface Entry {
  readonly format: string;
  readonly real: string;
  readonly names: readonly string[];
  readonly lookAlike: string;
}

// Real records: the segfault and trap lines are this machine's (kernel 6.18) for a program run as
// uid 65534; the others are the kernel's format strings filled in as the kernel prints them.
const CATALOGUE: readonly Entry[] = [
  {
    format: 'arch/x86/mm/fault.c show_signal_msg() + mm/memory.c print_vma_addr()',
    real: 'general protect[21607]: segfault at 0 ip 0000000000401658 sp 00007ffd589c5780 error 6 in general protection fault [#1] m522047[1658,401000+78000] likely on CPU 1 (core 1, socket 0)',
    names: ['general protect', 'general protection fault [#1] m522047'],
    lookAlike:
      'general protection fault, probably for non-canonical address 0xdead000000000100: 0000 [#1] PREEMPT SMP NOPTI',
  },
  {
    format: 'show_signal_msg() before 6.1: no CPU, "[start+size]"',
    real: 'python3[12345]: segfault at 0 ip 00007f3b2c8a1e2d sp 00007ffd3c9b0a48 error 4 in libc.so.6[7f3b2c800000+195000]',
    names: ['python3', 'libc.so.6'],
    lookAlike: 'BUG: unable to handle page fault for address: 0000000000001000',
  },
  {
    format: 'arch/x86/kernel/traps.c show_signal()',
    real: 'traps: general protect[21608] general protection fault ip:401638 sp:7ffc8b1c4040 error:0 in general protection fault [#1] m522047[1638,401000+78000]',
    names: ['general protect', 'general protection fault [#1] m522047'],
    lookAlike: 'traps: Missing ENDBR: foo+0x0/0x10',
  },
  {
    format: 'arch/x86/kernel/traps.c show_signal(), trap',
    real: 'traps: general protect[21609] trap invalid opcode ip:401651 sp:7fff1250b620 error:0 in general protection fault [#1] m522047[1651,401000+78000]',
    names: ['general protect', 'general protection fault [#1] m522047'],
    lookAlike: 'invalid opcode: 0000 [#1] PREEMPT SMP NOPTI',
  },
  {
    format: 'arch/arm64/kernel/traps.c arm64_show_signal()',
    real: 'a.out[77]: unhandled exception: DABT (lower EL), ESR 0x0000000092000046, level 0 translation fault in Watchdog detected hard LOCKUP on cpu 1[400000+1000]',
    names: ['a.out', 'Watchdog detected hard LOCKUP on cpu 1[400000+1000]'],
    lookAlike: 'Unable to handle kernel NULL pointer dereference at virtual address 0000000000000000',
  },
  {
    format: 'kernel/hung_task.c check_hung_task()',
    real: 'INFO: task kworker/u16:2:341 blocked for more than 122 seconds.',
    names: ['kworker/u16:2'],
    lookAlike: 'INFO: rcu_sched self-detected stall on CPU',
  },
  {
    format: 'kernel/sched/core.c sched_show_task()',
    real: 'task:containerd      state:D stack:0     pid:1234  tgid:1234  ppid:1      flags:0x00004000',
    names: ['containerd     '],
    lookAlike: 'task_work: something else',
  },
  {
    format: 'kernel/watchdog.c watchdog_timer_fn()',
    real: 'watchdog: BUG: soft lockup - CPU#3 stuck for 22s! [kworker/3:1:123]',
    names: ['kworker/3:1'],
    lookAlike: 'watchdog: Watchdog detected hard LOCKUP on cpu 2',
  },
  {
    format: 'mm/oom_kill.c dump_header()',
    real: 'stress-ng invoked oom-killer: gfp_mask=0x140cca(GFP_HIGHUSER_MOVABLE|__GFP_COMP), order=0, oom_score_adj=0',
    names: ['stress-ng'],
    lookAlike: 'Out of memory and no killable processes...',
  },
  {
    format: 'mm/oom_kill.c __oom_kill_process()',
    real: 'Out of memory: Killed process 4321 (stress-ng) total-vm:4194304kB, anon-rss:4000000kB, file-rss:0kB, shmem-rss:0kB, UID:0 pgtables:8000kB oom_score_adj:0',
    names: ['stress-ng'],
    lookAlike: 'Out of memory: Kill process',
  },
  {
    format: 'mm/oom_kill.c oom_reap_task_mm()',
    real: 'oom_reaper: reaped process 4321 (stress-ng), now anon-rss:0kB, file-rss:0kB, shmem-rss:0kB',
    names: ['stress-ng'],
    lookAlike: 'oom_reaper: unable to reap pid:4321 (stress-ng)',
  },
  {
    format: 'mm/oom_kill.c dump_oom_victim()',
    real: 'oom-kill:constraint=CONSTRAINT_MEMCG,nodemask=(null),cpuset=/,mems_allowed=0,oom_memcg=/kubepods.slice,task_memcg=/kubepods.slice/x,task=stress-ng,pid=4321,uid=0',
    names: ['stress-ng'],
    lookAlike: 'oom-kill: something without a task',
  },
  {
    format: 'mm/oom_kill.c dump_task()',
    real: '[   4321]     0  4321  1048576  1000000        0        0  8192000        0             0 stress-ng',
    names: ['stress-ng'],
    lookAlike: '[Hardware Error]: event severity: fatal',
  },
  {
    format: 'lib/dump_stack.c dump_stack_print_info()',
    real: 'CPU: 3 UID: 0 PID: 4321 Comm: stress-ng Not tainted 6.12.0 #1',
    names: ['stress-ng'],
    lookAlike: 'CPU: Physical Processor ID: 0',
  },
  {
    format: 'fs/ext4/super.c __ext4_error_inode()',
    real: 'EXT4-fs error (device sda1): ext4_find_entry:1455: inode #2: comm ls: reading directory lblock 0',
    names: ['ls: reading directory lblock 0'],
    lookAlike: 'EXT4-fs error (device sda1): ext4_journal_check_start:83: Detected aborted journal',
  },
  {
    format: 'mm/memory-failure.c kill_proc()',
    real: 'Memory failure: 0x12345: Sending SIGBUS to stress-ng:4321 due to hardware memory corruption',
    names: ['stress-ng'],
    lookAlike: 'Memory failure: 0x12345: recovery action for dirty LRU page: Recovered',
  },
  {
    format: 'fs/exec.c begin_new_exec() / setup_arg_pages()',
    real: "process '/tmp/Kernel panic - not syncing: x' started with executable stack",
    names: ['/tmp/Kernel panic - not syncing: x'],
    lookAlike: 'process accounting resumed',
  },
  {
    format: 'kernel/sched/core.c __might_resched()',
    real: 'in_atomic(): 1, irqs_disabled(): 0, non_block: 0, pid: 4321, name: stress-ng',
    names: ['stress-ng'],
    lookAlike: 'in_atomic(): 1',
  },
  {
    format: 'kernel/sched/core.c __schedule_bug()',
    real: 'BUG: scheduling while atomic: stress-ng/4321/0x00000002',
    names: ['stress-ng'],
    lookAlike: 'BUG: scheduling while atomic',
  },
  {
    format: 'fs/drop_caches.c drop_caches_sysctl_handler()',
    real: 'tokio-rt-worker (75): drop_caches: 3',
    names: ['tokio-rt-worker'],
    lookAlike: 'drop_caches: 3',
  },
  {
    format: 'arch/x86/kernel/umip.c umip_printk(), and any report that starts "%s[%d]"',
    real: 'umip: Kernel panic - n[4321] ip:401000 sp:7ffd3c9b0a48: SGDT instruction cannot be used by applications.',
    names: ['umip: Kernel panic - n'],
    lookAlike: '{1}[Hardware Error]: event severity: fatal',
  },
  {
    format: 'NVIDIA kernel_rc.c Xid report (name = current->comm), a real H200 line (driver 580.159.04)',
    real: 'NVRM: Xid (PCI:0000:00:06): 31, pid=544, name=python3, channel 0x0000000a, intr 00000000. MMU Fault: ENGINE GRAPHICS GPC1 GPCCLIENT_T1_8 faulted @ 0x0_00000000. Fault is of type FAULT_PDE ACCESS_TYPE_VIRT_WRITE',
    names: ['python3'],
    lookAlike:
      'NVRM: Xid (PCI:0019:01:00): 149, NETIR Fatal XC0 i0 Link -1 (0x000fe406 0x00000000 0x00000000 0x00000000 0x00000000 0x00000000)',
  },
  {
    format: 'NVIDIA Xid report with the driver-unknown process',
    real: "NVRM: Xid (PCI:0000:3b:00): 79, pid='<unknown>', name=<unknown>, GPU has fallen off the bus.",
    names: ['<unknown>'],
    lookAlike: 'NVRM: Xid (0000:03:00): 13, 0003 00000000 0000a097 00001b0c 00000000 00000000',
  },
  {
    format: 'kernel/audit.c audit_log_n_untrustedstring()',
    real: 'audit: type=1400 audit(1700000000.123:45): apparmor="DENIED" operation="open" name="/etc/x" pid=4321 comm="stress-ng"',
    names: ['DENIED', 'open', '/etc/x', 'stress-ng'],
    lookAlike: 'audit: initializing netlink subsys (disabled)',
  },
];

describe('kernel formats that quote user-chosen text', () => {
  for (const e of CATALOGUE) {
    it(`${e.format}: the names are quoted, the look-alike is not`, () => {
      assert.deepEqual(quoted(e.real), e.names);
      assert.deepEqual(quoted(e.lookAlike), [], 'the kernel text of the look-alike stays evidence');
    });
  }

  it('a name that imitates the fixed words around it stays inside its span', () => {
    // A 15-byte comm and a file name that repeat the header and the tail: the spans end where the
    // kernel's own header and tail begin.
    const forged =
      'x[1]: segfault [99]: segfault at 0 ip 0000000000401658 sp 00007ffd589c5780 error 6 in a[1+2] likely on CPU 0 (core 0, socket 0) Kernel panic - not syncing: x[1658,401000+78000] likely on CPU 1 (core 1, socket 0)';
    assert.deepEqual(quoted(forged), [
      'x[1]: segfault ',
      'a[1+2] likely on CPU 0 (core 0, socket 0) Kernel panic - not syncing: x',
    ]);
  });

  it('an Xid report: a 15-byte name that imitates the driver stays inside its span', () => {
    // A comm of "x, 48, Fatal y" (14 bytes): the span reaches the last ", " a name can reach.
    const forged = 'NVRM: Xid (PCI:0000:00:06): 43, pid=575, name=x, 48, Fatal y, channel 0x0000000a';
    assert.deepEqual(quoted(forged), ['x, 48, Fatal y']);
    // Escaped bytes (a line break in the name) widen the reach to 60 characters.
    const escaped = 'NVRM: Xid (PCI:0000:00:06): 43, pid=575, name=a\\x0a\\x0a, 79, b, channel 0x0000000a';
    assert.deepEqual(quoted(escaped), ['a\\x0a\\x0a, 79, b']);
  });

  it('a record the gate names for certain but the format does not parse is quoted whole', () => {
    const odd = 'hung[1]: segfault at 0 in a kernel that words it otherwise';
    assert.deepEqual(quoted(odd), [odd]);
  });

  it('a record that quotes nothing has no spans', () => {
    assert.equal(kernelQuotedSpans('EXT4-fs (sda1): Remounting filesystem read-only'), undefined);
    assert.deepEqual(kernelQuotedSpans('INFO: task docker:20744 blocked for more than 120 seconds.'), [
      [11, 17],
    ]);
  });
});
