// Runs in the agent's container in place of the agent (blast-radius.test.ts), with the image's own
// Node (type stripping, so no tsx): what code running as the agent can reach. It only reads; access(2)
// with W_OK tells a writable file system from a read-only one without writing, and the one mount(2) is
// a tmpfs on the container's own /tmp, in its own mount namespace, unmounted at once. Prints one JSON
// object on stdout.
import { createHash } from 'node:crypto';
import {
  accessSync,
  closeSync,
  constants,
  mkdirSync,
  openSync,
  readdirSync,
  readFileSync,
  statSync,
} from 'node:fs';
import { createRequire } from 'node:module';

/** 'ok' or the value `f` returns; the error code when it throws. */
function attempt(f: () => unknown): unknown {
  try {
    return f() ?? 'ok';
  } catch (err) {
    return (err as NodeJS.ErrnoException).code ?? String(err);
  }
}

const writable = (path: string) => attempt(() => accessSync(path, constants.W_OK));
const sha256 = (path: string) => createHash('sha256').update(readFileSync(path)).digest('hex');
const pids = (proc: string) => readdirSync(proc).filter((n) => /^\d+$/.test(n)).length;

/** The mount ID of the "/" entry of a mountinfo: tells the host's table from the container's. */
function rootMountId(path: string): string | undefined {
  const lines = readFileSync(path, 'utf8').split('\n');
  return lines.find((l) => l.split(' ')[4] === '/')?.split(' ')[0];
}

/** Host block devices the container's /dev shows, and how many of them open for reading. */
function blockDevices(): { visible: number; openable: number; names: string[] } {
  const names = readdirSync('/dev').filter(
    (n) => attempt(() => statSync(`/dev/${n}`).isBlockDevice()) === true,
  );
  const openable = names.filter((n) => attempt(() => closeSync(openSync(`/dev/${n}`, 'r'))) === 'ok');
  return { visible: names.length, openable: openable.length, names: openable };
}

interface Libc {
  func(signature: string): (...args: unknown[]) => number;
}

/** mount(2) of a tmpfs on the container's own /tmp: whether a compromised agent may mount at all. */
function tryMount(): unknown {
  const koffi = createRequire('/app/dist/main.js')('koffi') as {
    load(name: string): Libc;
    errno(): number;
  };
  const libc = koffi.load('libc.so.6');
  const mount = libc.func('int mount(const char *, const char *, const char *, unsigned long, const char *)');
  const umount = libc.func('int umount2(const char *, int)');
  const target = `/tmp/npd-reach-${process.pid}`;
  mkdirSync(target);
  if (mount('none', target, 'tmpfs', 0, 'size=1m') !== 0) return `errno ${koffi.errno()}`;
  umount(target, 0);
  return 'ok';
}

function status(field: string): string | undefined {
  return new RegExp(`^${field}:\\s*(\\S+)`, 'm').exec(readFileSync('/proc/self/status', 'utf8'))?.[1];
}

/**
 * Through the host's /proc, mounted whole at /host/proc: the root file system of a
 * host process, NPD_REACH_PID (the test's own, whose capabilities the container has; whether the host
 * init's may be entered depends on the machine, so it is only recorded).
 */
function viaHostProc(): Record<string, unknown> {
  const root = `/host/proc/${process.env.NPD_REACH_PID}/root`;
  return {
    hostProcPids: attempt(() => pids('/host/proc')),
    hostInitEntries: attempt(() => readdirSync('/host/proc/1').sort().join(',')),
    hostShadow: attempt(() => sha256(`${root}/etc/shadow`)),
    hostEtcWritable: writable(`${root}/etc`),
    hostInitShadow: attempt(() => sha256('/host/proc/1/root/etc/shadow')),
    hostRootMount: attempt(() => rootMountId('/host/proc/1/mountinfo')),
  };
}

/** What privileged gives whatever is mounted. */
function privileged(): Record<string, unknown> {
  return {
    capEff: status('CapEff'),
    seccomp: status('Seccomp'),
    blockDevices: attempt(blockDevices),
    mount: attempt(tryMount),
    procSysWritable: writable('/proc/sys/kernel/core_pattern'),
    sysWritable: writable('/sys/kernel'),
    devKmsgWritable: writable('/dev/kmsg'),
    hostKmsgMountWritable: writable('/host/dev/kmsg'),
    hostVarLogEntries: attempt(() => readdirSync('/host/var/log').length),
    hostVarLogWritable: writable('/host/var/log'),
  };
}

/** The pod's own /proc, which --host-proc=/proc reads: its PIDs, the node's kernel-wide figures. */
function ownProc(): Record<string, unknown> {
  return {
    ownPids: pids('/proc'),
    ownRootMount: rootMountId('/proc/1/mountinfo'),
    bootId: readFileSync('/proc/sys/kernel/random/boot_id', 'utf8').trim(),
    tasks: Number(readFileSync('/proc/loadavg', 'utf8').split(' ')[3]?.split('/')[1]),
  };
}

process.stdout.write(JSON.stringify({ ...viaHostProc(), ...privileged(), ...ownProc() }));
