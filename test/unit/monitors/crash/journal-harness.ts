/**
 * Fakes for the previous-boot journal tests: `journalctl -o json` kernel entries, a host root with a
 * journal file (and pstore fixtures), a journalctl child, and one start-up report run with its metrics.
 */
import type { ChildProcess } from 'node:child_process';
import { EventEmitter } from 'node:events';
import { cp, mkdir, mkdtemp, readdir, rm, utimes, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { PassThrough } from 'node:stream';
import { reportPreviousCrash } from '../../../../src/agent/crash-report.ts';
import { FakeClock } from '../../../../src/core/clock.ts';
import { silentLogger } from '../../../../src/core/logger.ts';
import { createRegistry } from '../../../../src/core/metrics.ts';
import type { Status } from '../../../../src/core/types.ts';
import type { SpawnFn } from '../../../../src/host/process/bounded-command.ts';
import { JOURNAL_SKIPS } from '../../../../src/monitors/crash/journal-report.ts';
import { CRASH_KINDS } from '../../../../src/monitors/crash/kernel-crash.ts';
import { seriesValue } from '../../../support/fake-node.ts';

const PSTORE = join(import.meta.dirname, '..', '..', '..', 'fixtures', 'pstore');
/** This boot, as /proc/sys/kernel/random/boot_id has it. */
export const BOOT = '0a9b8c7d-6e5f-4a3b-8c1d-0e9f8a7b6c5d';
/** The previous boot, as the journal writes it. */
export const PREV = '5f3c0d9e8a7b4c6d9e0f1a2b3c4d5e6f';
export const PREV_UUID = '5f3c0d9e-8a7b-4c6d-9e0f-1a2b3c4d5e6f';
/** The previous boot's last minutes. */
export const T = Date.UTC(2026, 10, 30, 23, 50, 0);
const roots: string[] = [];

/** A temporary host root, removed by removeRoots(). */
export async function tempRoot(prefix: string): Promise<string> {
  const root = await mkdtemp(join(tmpdir(), prefix));
  roots.push(root);
  return root;
}

export function removeRoots(): Promise<unknown> {
  return Promise.all(roots.splice(0).map((r) => rm(r, { recursive: true, force: true })));
}

/** One line as `journalctl -o json` prints a kernel entry; `at` in ms, written in µs. */
export function kernel(n: number, at: number, message: string, priority = 6): string {
  return JSON.stringify({
    __CURSOR: `s=4583a35a654645978a4b88a0d71bccde;i=${n};b=${PREV};m=${n.toString(16)};t=0;x=0`,
    __REALTIME_TIMESTAMP: String(at * 1000 + 417),
    __MONOTONIC_TIMESTAMP: String(5_000_000_000 + n),
    _BOOT_ID: PREV,
    _TRANSPORT: 'kernel',
    PRIORITY: String(priority),
    SYSLOG_IDENTIFIER: 'kernel',
    MESSAGE: message,
  });
}

/** Lines from the wordings of rules/kernel.yaml and test/corpus/kernel-crash.yaml. */
export const BENIGN = [
  // init/main.c start_kernel(): "Kernel command line: %s" -- "panic=10" is a setting, not a panic.
  'Kernel command line: BOOT_IMAGE=/boot/vmlinuz-6.1.0-18-amd64 root=/dev/nvme0n1p1 ro panic=10 console=ttyS0',
  // kernel/watchdog.c: the NMI watchdog starting (corpus look-alike of HardLockup).
  'NMI watchdog: Enabled. Permanently consumes one hw-PMU counter.',
  // arch/x86/kernel/traps.c do_trap(): a user program's trap (corpus look-alike of KernelOops).
  'traps: python3[4242] trap invalid opcode ip:7f0e5b2c4a1e sp:7ffd5a9c2e80 error:0 in libc.so.6[7f0e5b228000+195000]',
];

/** A host root whose /var/log/journal/<machine id> holds a journal file; and pstore fixtures if named. */
export async function host(
  opts: { journal?: boolean; pstore?: string[]; written?: number } = {},
): Promise<string> {
  const root = await tempRoot('npd-journal-crash-');
  if (opts.journal !== false) {
    const dir = join(root, 'var', 'log', 'journal', '0123456789abcdef0123456789abcdef');
    await mkdir(dir, { recursive: true });
    await writeFile(join(dir, 'system.journal'), '');
  }
  const pstore = join(root, 'sys', 'fs', 'pstore');
  await mkdir(pstore, { recursive: true });
  for (const c of opts.pstore ?? []) await cp(join(PSTORE, c), pstore, { recursive: true });
  const w = (opts.written ?? T) / 1000;
  for (const name of await readdir(pstore)) await utimes(join(pstore, name), w, w);
  return root;
}

export interface Journalctl {
  readonly stdout?: string;
  readonly stderr?: string;
  readonly code?: number;
  /** The spawn fails as for a missing binary. */
  readonly missing?: boolean;
}

/** A journalctl child that prints `out` and exits; every command line is kept in `argv`. */
export function fakeJournalctl(out: Journalctl, argv: string[][]): SpawnFn {
  return (command, args) => {
    argv.push([command, ...args]);
    const child = new EventEmitter() as ChildProcess;
    const stdout = new PassThrough();
    const stderr = new PassThrough();
    Object.assign(child, { stdout, stderr, kill: () => true });
    setImmediate(() => {
      if (out.missing) {
        child.emit('error', Object.assign(new Error(`spawn ${command} ENOENT`), { code: 'ENOENT' }));
        return;
      }
      let open = 2;
      const closed = () => --open === 0 && child.emit('close', out.code ?? 0);
      stdout.on('end', closed);
      stderr.on('end', closed);
      stdout.end(out.stdout ?? '');
      stderr.end(out.stderr ?? '');
    });
    return child;
  };
}

/** bootId null: this boot's ID could not be read. */
export async function run(root: string, out: Journalctl, bootId: string | null = BOOT) {
  const registry = createRegistry();
  const statuses: Status[] = [];
  const argv: string[][] = [];
  const deps = {
    hostRoot: root,
    bootId: bootId ?? undefined,
    clock: new FakeClock(T + 3_600_000),
    registry,
    logger: silentLogger(),
    journal: { spawn: fakeJournalctl(out, argv) },
  };
  await reportPreviousCrash(deps, (s) => statuses.push(s));
  const counts = async (origin: string) =>
    Object.fromEntries(
      await Promise.all(
        CRASH_KINDS.map(async (kind) => [
          kind,
          await seriesValue(registry, 'npd_previous_boot_crashes_total', { kind, origin }),
        ]),
      ),
    );
  const skipped = Object.fromEntries(
    await Promise.all(
      JOURNAL_SKIPS.map(async (reason) => [
        reason,
        await seriesValue(registry, 'npd_previous_boot_journal_skipped_total', { reason }),
      ]),
    ),
  );
  const events = statuses.flatMap((s) => s.events);
  return {
    statuses,
    events,
    argv,
    journal: await counts('journal'),
    pstore: await counts('pstore'),
    skipped,
  };
}

export const none = { panic: 0, oops: 0, hard_lockup: 0 };
export const noSkips = Object.fromEntries(JOURNAL_SKIPS.map((r) => [r, 0]));
export const skippedOnly = (reason: string) => ({ ...noSkips, [reason]: 1 });
