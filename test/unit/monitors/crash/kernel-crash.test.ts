/**
 * The crash classifier reads a kernel line's wordings outside the text it quotes from user space: the
 * segfault report of a program named after a crash is no crash (issue 38 item 1, the PreviousBootPanic
 * a planted record gave after the next reboot). Control: the kernel's own crash lines still are.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { worstCrashLine } from '../../../../src/monitors/crash/kernel-crash.ts';

const segfault = (name: string) =>
  `${name.slice(0, 15)}[4242]: segfault at 0 ip 0000000000401658 sp 00007ffd589c5780 error 6 in ${name}[1658,401000+78000] likely on CPU 1 (core 1, socket 0)`;

describe('worstCrashLine and quoted names', () => {
  for (const [name, kind] of [
    ['Kernel panic - not syncing: Fatal exception', 'panic'],
    ['Watchdog detected hard LOCKUP on cpu 1', 'hard_lockup'],
    ['kernel BUG at slub.c:42!', 'oops'],
  ] as const) {
    it(`a program named "${name}" is no ${kind}; the kernel's line is`, () => {
      assert.equal(worstCrashLine([segfault(name)]), undefined);
      assert.deepEqual(worstCrashLine([segfault(name), name]), { kind, index: 1 }, 'control');
    });
  }
});
