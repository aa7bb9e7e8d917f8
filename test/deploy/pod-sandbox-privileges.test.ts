// The DaemonSet's pod reproduced with a mount namespace and setpriv (test/deploy/sandbox.ts): the pod is
// privileged, so uid 0 has every capability and reads any file of the host it sees, including other
// users' private files; what it cannot do is write through the read-only host mounts, nor reach host
// processes through a host /proc, which is not mounted. docs/install.md states the cost of privileged;
// test/container/blast-radius.test.ts measures what a real privileged container still reaches. The device cgroup, the reason for privileged, is
// not reproduced here: test/container/daemonset.test.ts runs the image in a real runtime for that.
// Needs root, unshare, setpriv and kubectl; skipped otherwise.
//   node --import tsx --test test/deploy/pod-sandbox-privileges.test.ts
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { chmodSync, chownSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { type Pod, prepareSandbox, probeInSandbox, sandboxSkip } from './sandbox.ts';

/** Capability numbers from linux/capability.h, for the names a pod spec may add here. */
const CAP_BITS: Record<string, number> = {
  DAC_READ_SEARCH: 2,
  NET_ADMIN: 12,
  NET_RAW: 13,
  SYS_PTRACE: 19,
  SYS_ADMIN: 21,
  SYSLOG: 34,
};

/**
 * /proc/self/status CapEff for a set of capability names. `ALL` is every capability the test itself may
 * pass on (its bounding set: a CI machine's root may lack some, e.g. CAP_SYS_RESOURCE).
 */
function capMask(names: readonly string[]): string {
  if (names.includes('ALL')) return /CapBnd:\s*(\w+)/.exec(readFileSync('/proc/self/status', 'utf8'))![1]!;
  let mask = 0n;
  for (const n of names) {
    const bit = CAP_BITS[n];
    assert.ok(bit !== undefined, `capability ${n} is not in CAP_BITS`);
    mask |= 1n << BigInt(bit);
  }
  return mask.toString(16).padStart(16, '0');
}

function marker(): string {
  return randomBytes(4).toString('hex');
}

/** A file of `uid` with mode 0600 in the sandbox. */
function privateFile(sandbox: string, name: string, uid?: number): string {
  const file = join(sandbox, name);
  writeFileSync(file, name);
  if (uid !== undefined) chownSync(file, uid, uid);
  chmodSync(file, 0o600);
  return file;
}

/** Node code that tries each access and prints {name: 'ok' | error code, capEff, uid} as JSON. */
function accessProbe(host: string, own: string, foreign: string): string {
  return `
      const fs = require('node:fs');
      const r = {};
      const tryIt = (k, f) => { try { f(); r[k] = 'ok'; } catch (e) { r[k] = e.code; } };
      tryIt('kmsg', () => fs.closeSync(fs.openSync(${JSON.stringify(join(host, 'dev/kmsg'))}, 'r')));
      tryIt('ownFile', () => fs.readFileSync(${JSON.stringify(own)}));
      tryIt('foreignFile', () => fs.readFileSync(${JSON.stringify(foreign)}));
      tryIt('hostInitEnviron', () => fs.readFileSync(${JSON.stringify(join(host, 'proc/1/environ'))}));
      tryIt('hostInitRoot', () => fs.readdirSync(${JSON.stringify(join(host, 'proc/1/root'))}));
      tryIt('hostInitMountinfo', () => fs.readFileSync(${JSON.stringify(join(host, 'proc/1/mountinfo'))}));
      r.hostProc = fs.readdirSync(${JSON.stringify(join(host, 'proc'))}).join(',');
      tryIt('writeHostLog', () => fs.writeFileSync(${JSON.stringify(join(host, 'var/log', `npd-write-${marker()}`))}, 'x'));
      tryIt('uptime', () => fs.readFileSync('/proc/uptime'));
      r.capEff = /CapEff:\\s*(\\w+)/.exec(fs.readFileSync('/proc/self/status', 'utf8'))[1];
      r.uid = String(process.getuid());
      process.stdout.write(JSON.stringify(r));
    `;
}

const skip = sandboxSkip();

describe('the DaemonSet pod, reproduced with a mount namespace and setpriv: privileges', { skip }, () => {
  let pod: Pod;
  let sandbox: string;

  before(() => {
    ({ pod, sandbox } = prepareSandbox());
  });

  after(() => {
    if (sandbox) rmSync(sandbox, { recursive: true, force: true });
  });

  test('the pod is privileged: every capability', () => {
    assert.deepEqual(pod.caps.add, ['ALL']);
    assert.equal(pod.runAsUser, 0);
  });

  test('privileged uid 0 reads every file it sees, but cannot write through the read-only host mounts', () => {
    const foreign = privateFile(sandbox, 'foreign-0600', 1000);
    const own = privateFile(sandbox, 'own-0600');
    const code = accessProbe(join(sandbox, 'host'), own, foreign);
    // Of the host's /proc only its init's mount table is mounted: no /proc/1/root into the host's
    // file systems, no environ. The kernel-wide files (uptime) come from --host-proc=/proc, which here
    // is the host's own (the sandbox has no PID namespace; test/container measures a real pod's).
    const r = probeInSandbox(pod, sandbox, pod.caps.add, code);
    assert.deepEqual(r, {
      kmsg: 'ok',
      ownFile: 'ok',
      foreignFile: 'ok',
      hostInitEnviron: 'ENOENT',
      hostInitRoot: 'ENOENT',
      hostInitMountinfo: 'ok',
      hostProc: '1',
      writeHostLog: 'EROFS',
      uptime: 'ok',
      capEff: capMask(pod.caps.add),
      uid: '0',
    });
  });
});
