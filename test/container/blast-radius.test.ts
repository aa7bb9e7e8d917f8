// What a compromised agent can reach from the shipped pod: the built image run privileged with the
// rendered deploy/base DaemonSet's security context and mounts (test/container/pod-flags.ts), with
// test/container/reach.ts in place of the agent. The pod mounts no host /proc, so /host/proc/<pid>/root,
// a host process's root file system, is gone; the negative control mounts the whole host /proc as the
// manifests of earlier releases did and reads the host's /etc/shadow through it. What privileged still allows (every host
// block device, mount(2), writable /proc/sys and /sys) is measured and printed: docs/install.md, "The
// blast radius", quotes it. Nothing is written to the host: reach.ts only reads.
//   npm run test:container        (builds the image first)
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import {
  closeSync,
  mkdirSync,
  mkdtempSync,
  openSync,
  readdirSync,
  readFileSync,
  rmSync,
  statSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { agentContainer, type Doc, one, podSpec, renderBase } from '../deploy/support.ts';
import { type PodContext, podmanRunFlags } from './pod-flags.ts';
import { containerSkip, IMAGE, imageExists, RUNTIME_FLAGS } from './podman.ts';

type Reach = Record<string, unknown>;

const skip = containerSkip();
const REACH = join(import.meta.dirname, 'reach.ts');

/** The whole host /proc at /host/proc instead of its init's mountinfo alone (the control). */
function withWholeHostProc(docs: readonly Doc[]): Doc[] {
  const copy = structuredClone([...docs]);
  const ds = one(copy, 'DaemonSet');
  const volume = podSpec(ds).volumes.find((v) => v.hostPath?.path === '/proc/1/mountinfo');
  assert.ok(volume?.hostPath, 'the DaemonSet mounts the host init mountinfo');
  volume.hostPath = { path: '/proc', type: 'Directory' };
  const mount = agentContainer(ds).volumeMounts.find((m) => m.name === volume.name);
  assert.ok(mount);
  mount.mountPath = '/host/proc';
  return copy;
}

/** The DaemonSet's container as podman runs it, but reach.ts for the agent and its own network. */
function reach(docs: readonly Doc[], ctx: PodContext): Reach {
  // A pod has a network namespace of its own; pod-flags.ts shares the host's only for the API server.
  const flags = podmanRunFlags(docs, ctx).filter((f) => f !== '--network=host');
  const argv = ['run', '--rm', '--pull=never', ...RUNTIME_FLAGS, ...flags, '--network=none'];
  argv.push(`--volume=${REACH}:/reach/reach.ts:ro`, `--env=NPD_REACH_PID=${process.pid}`);
  argv.push('--entrypoint=node', IMAGE, '/reach/reach.ts');
  const out = execFileSync('podman', argv, { encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] });
  return JSON.parse(out) as Reach;
}

const sha256 = (path: string) => createHash('sha256').update(readFileSync(path)).digest('hex');
const hostRootMount = () =>
  readFileSync('/proc/1/mountinfo', 'utf8')
    .split('\n')
    .find((l) => l.split(' ')[4] === '/')
    ?.split(' ')[0];
const hostTasks = () => Number(readFileSync('/proc/loadavg', 'utf8').split(' ')[3]?.split('/')[1]);
const capBnd = () => /CapBnd:\s*(\w+)/.exec(readFileSync('/proc/self/status', 'utf8'))?.[1];
const hostPids = () => readdirSync('/proc').filter((n) => /^\d+$/.test(n)).length;

/** Block devices in the host's /dev that this test, root on the host, can open for reading. */
function hostOpenableBlockDevices(): string[] {
  const opens = (path: string) => {
    try {
      if (!statSync(path).isBlockDevice()) return false;
      closeSync(openSync(path, 'r'));
      return true;
    } catch {
      return false;
    }
  };
  return readdirSync('/dev').filter((n) => opens(`/dev/${n}`));
}

/** The measured reach of the shipped pod, one line each, as docs/install.md quotes it. */
function reachList(r: Reach): string[] {
  const d = r.blockDevices as { visible: number; openable: number; names: string[] };
  return [
    `host /proc: only ${r.hostInitEntries} of PID 1; /host/proc/<pid>/root/etc/shadow ${r.hostShadow}`,
    `PIDs in the pod's /proc: ${r.ownPids} (the host's: ${hostPids()})`,
    `capabilities: CapEff ${r.capEff} (the bounding set ${capBnd()}), Seccomp ${r.seccomp}`,
    `host block devices: ${d.openable} of ${d.visible} open for reading (${d.names.join(' ')})`,
    `mount(2) of a tmpfs: ${r.mount}`,
    `write access: /proc/sys ${r.procSysWritable}, /sys ${r.sysWritable}, /dev/kmsg ${r.devKmsgWritable}, /host/dev/kmsg (readOnly) ${r.hostKmsgMountWritable}`,
    `/host/var/log: ${r.hostVarLogEntries} entries readable, write access ${r.hostVarLogWritable}`,
  ];
}

describe('blast radius: what a compromised agent reaches from the shipped pod', { skip }, () => {
  let work: string;
  let ctx: PodContext;
  let shipped: Reach | undefined;
  const shippedReach = (): Reach => {
    shipped ??= reach(renderBase(), ctx);
    return shipped;
  };

  before(() => {
    assert.ok(imageExists(), `${IMAGE} is not built: run test/container/build-image.sh`);
    work = mkdtempSync(join(tmpdir(), 'npd-ct-reach-'));
    mkdirSync(join(work, 'serviceaccount'));
    ctx = {
      nodeName: 'npd-reach',
      serviceAccountDir: join(work, 'serviceaccount'),
      apiserverPort: 1,
      workDir: work,
      statusPort: 0,
      metricsPort: 0,
    };
  });

  after(() => {
    if (work) rmSync(work, { recursive: true, force: true });
  });

  test('no host /proc: no way into the host root file system; the kernel-wide files are the node', (t) => {
    const r = shippedReach();
    t.diagnostic(`shipped pod: ${JSON.stringify(r)}`);
    assert.equal(r.hostShadow, 'ENOENT', '/host/proc/<pid>/root/etc/shadow');
    assert.equal(r.hostEtcWritable, 'ENOENT', '/host/proc/<pid>/root/etc');
    assert.equal(r.hostInitShadow, 'ENOENT', '/host/proc/1/root/etc/shadow');
    assert.equal(r.hostInitEntries, 'mountinfo', 'of the host /proc only its init mountinfo');
    assert.equal(r.hostRootMount, hostRootMount(), "/host/proc/1/mountinfo is the host init's table");
    assert.notEqual(r.ownRootMount, r.hostRootMount, "the pod's /proc/1 is its own init");
    assert.ok((r.ownPids as number) < 5 && hostPids() > 20, `the pod sees ${r.ownPids} PIDs`);
    // What --host-proc=/proc reads: the node's boot and task count, not the pod's.
    assert.equal(r.bootId, readFileSync('/proc/sys/kernel/random/boot_id', 'utf8').trim());
    const tasks = hostTasks();
    assert.ok(Math.abs((r.tasks as number) - tasks) < Math.max(50, tasks / 10), `${r.tasks} vs ${tasks}`);
  });

  test('negative control: the whole host /proc, at /host/proc, reaches the host', (t) => {
    const r = reach(withWholeHostProc(renderBase()), ctx);
    t.diagnostic(`whole host /proc: ${JSON.stringify(r)}`);
    assert.equal(r.hostShadow, sha256('/etc/shadow'), "the host's /etc/shadow, read");
    assert.equal(r.hostEtcWritable, 'ok', "the host's /etc, writable (access(2), nothing written)");
    assert.ok((r.hostProcPids as number) > 20, 'every host process');
  });

  test('what privileged still allows without a host /proc (measured, for docs/install.md)', (t) => {
    const r = shippedReach();
    const devices = r.blockDevices as { visible: number; openable: number; names: string[] };
    for (const line of reachList(r)) t.diagnostic(line);
    assert.equal(r.capEff, capBnd(), 'every capability podman may give');
    assert.equal(r.seccomp, '0', 'no seccomp filter');
    // Whatever this machine lets its own root open (here not its root disk: EPERM even on the host).
    const host = hostOpenableBlockDevices();
    assert.ok(host.length > 0, 'the host has block devices its root may open');
    assert.deepEqual(
      host.filter((n) => !devices.names.includes(n)),
      [],
      'each opens in the pod too',
    );
    assert.equal(r.mount, 'ok', 'mount(2) works: a host disk could be mounted');
    assert.equal(r.procSysWritable, 'ok', '/proc/sys is writable (kernel.core_pattern)');
    assert.equal(r.sysWritable, 'ok', '/sys is writable');
    assert.equal(r.devKmsgWritable, 'ok', "the host's /dev/kmsg in /dev, not read-only");
    // access(2) and open(2) skip the read-only check for device nodes: a write goes to the driver.
    assert.equal(r.hostKmsgMountWritable, 'ok', 'readOnly does not stop writes to a device node');
    assert.ok((r.hostVarLogEntries as number) > 0, "the host's /var/log, readable");
    assert.equal(r.hostVarLogWritable, 'EROFS', 'and read-only');
  });
});
