// The built image (test/container/build-image.sh) run with podman and runc exactly as the rendered
// DaemonSet specifies (test/container/pod-flags.ts), against the real kube-apiserver + etcd of the e2e
// harness with the agent's own ServiceAccount, ClusterRole and binding from deploy/base. Proves with the
// real kubectl that a kernel line becomes a Node condition and an Event; that /healthz, /readyz and
// /metrics answer; that the probes read the node's /proc files and mount table without a host /proc;
// that SIGTERM stops it cleanly; and, as the negative control, that the unprivileged settings the
// DaemonSet had before cannot open /dev/kmsg (the runtime's device cgroup) and say so.
//   npm run test:container        (builds the image first)
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { type Doc, kustomizeWith, renderBase } from '../deploy/support.ts';
import { type ControlPlane, startControlPlane } from '../e2e/harness/controlplane.ts';
import { kmsg, marker } from '../e2e/support.ts';
import { metricValue, waitFor } from '../support/agent-process.ts';
import { formatSize, imageSize } from './image-size.ts';
import { serviceAccountDir, startPod } from './pod.ts';
import { type Container, containerSkip, IMAGE, imageExists } from './podman.ts';

const MiB = 1024 * 1024;
const GZIP_TARGET_MIB = 70;
/** deploy/base's securityContext before it became privileged: the negative control. */
const UNPRIVILEGED = {
  runAsUser: 0,
  runAsGroup: 0,
  privileged: false,
  allowPrivilegeEscalation: false,
  readOnlyRootFilesystem: true,
  capabilities: { drop: ['ALL'], add: ['SYSLOG'] },
  seccompProfile: { type: 'RuntimeDefault' },
};
const skip = containerSkip();

/**
 * The probes read the pod's own /proc (--host-proc=/proc) and the host's mount table from its one
 * mounted file: the container's own /proc/1/mountinfo would show its read-only root, so a wrong path
 * would be a read-only root here, and a missing file a probe error.
 */
async function assertProbesReadTheHost(metrics: string, c: Container): Promise<void> {
  const series = (name: string, probe: string) => `${name}{source="probe-monitor",probe="${probe}"}`;
  const probes = ['fd', 'pids', 'readonly-root'];
  const ran = async (probe: string) =>
    ((await metricValue(metrics, series('npd_probe_duration_seconds_count', probe))) ?? 0) >= 1;
  // First runs are splayed over 10 s.
  await waitFor(async () => (await Promise.all(probes.map(ran))).every(Boolean), 60_000, c.output);
  for (const probe of probes)
    assert.equal(await metricValue(metrics, series('npd_probe_errors_total', probe)), 0, `${probe} errors`);
  const readOnly = 'problem_gauge{type="ReadonlyRootFilesystem",reason="RootFilesystemIsReadOnly"}';
  assert.equal(await metricValue(metrics, readOnly), 0, 'the host root is writable');
}

describe('the image run as the DaemonSet runs it (podman, runc)', { skip }, () => {
  let cp: ControlPlane;
  let home: string;
  let work: string;
  let saDir: string;
  const running = new Set<Container>();

  const kubectl = (args: string[]) => cp.kubectl(args, { home });

  before(
    async () => {
      assert.ok(imageExists(), `${IMAGE} is not built: run test/container/build-image.sh`);
      cp = await startControlPlane();
      home = mkdtempSync(join(tmpdir(), 'npd-ct-home-'));
      work = mkdtempSync(join(tmpdir(), 'npd-ct-'));
      saDir = await serviceAccountDir(cp, home, work);
    },
    { timeout: 60 * 60_000 },
  );

  after(async () => {
    for (const c of running) c.remove();
    await cp?.stop();
    for (const d of [home, work]) if (d) rmSync(d, { recursive: true, force: true });
  });

  async function start(docs: readonly Doc[], securityContext?: Record<string, unknown>) {
    const pod = await startPod(cp, saDir, work, docs, { securityContext });
    running.add(pod.c);
    return pod;
  }

  test(`the image is at most ${GZIP_TARGET_MIB} MiB gzip`, () => {
    const size = imageSize(IMAGE);
    process.stdout.write(`${formatSize(IMAGE, size)}\n`);
    assert.ok(size.gzipBytes <= GZIP_TARGET_MIB * MiB, `${(size.gzipBytes / MiB).toFixed(1)} MiB gzip`);
  });

  test('deploy/base: a kernel line becomes a Node condition and an Event; healthy; SIGTERM exits 0', {
    timeout: 240_000,
  }, async () => {
    const { c, status, metrics } = await start(renderBase());
    const m = marker('npdct');
    const node = cp.nodeName;
    // Kernel wordings: fs/xfs/xfs_fsops.c xfs_do_force_shutdown(), mm/oom_kill.c __oom_kill_process().
    kmsg(
      `XFS (${m}): Corruption of in-memory data (0x8) detected at xfs_trans_cancel+0x1a/0x70 (fs/xfs/xfs_trans.c:1097).  Shutting down filesystem.`,
      `Out of memory: Killed process 4242 (${m}) total-vm:10240kB, anon-rss:5120kB, file-rss:0kB, shmem-rss:0kB, UID:0 pgtables:40kB oom_score_adj:0`,
    );
    await waitFor(
      async () => /XfsShutdown\s+True/.test(await kubectl(['describe', 'node', node])),
      60_000,
      c.output,
    );
    const described = await kubectl(['describe', 'node', node]);
    // kernel.yaml's 5 m lookback replays an XFS line an earlier run of this suite wrote, and a True
    // condition keeps its first message (NPD semantics): any of this suite's markers proves the path,
    // the Event below this run's.
    assert.match(described, /XfsShutdown\s+True.*XfsHasShutdown\s+XFS \(npdct[0-9a-f]{10}\)/);
    await waitFor(
      async () => (await kubectl(['events', '-n', 'default', '--for', `node/${node}`])).includes(m),
      60_000,
      c.output,
    );
    const events = await kubectl(['events', '-n', 'default', '--for', `node/${node}`]);
    assert.match(events, new RegExp(`Warning\\s+OOMKilling\\s+node/${node}\\s+.*\\(${m}\\)`, 'i'));
    for (const path of ['/healthz', '/readyz']) {
      const r = await fetch(`${status}${path}`);
      assert.equal(r.status, 200, `${path}: ${await r.text()}`);
    }
    assert.equal(await metricValue(metrics, 'npd_monitor_healthy{source="kernel-monitor"}'), 1);
    await assertProbesReadTheHost(metrics, c);
    const text = await (await fetch(metrics)).text();
    assert.match(
      text,
      /^problem_gauge\{(?=[^}]*type="XfsShutdown")(?=[^}]*reason="XfsHasShutdown")[^}]*\} 1$/m,
    );
    const code = await c.terminate(30_000);
    assert.equal(code, 0, c.output().slice(-2000));
    assert.match(c.output(), /"msg":"shutting down"[\s\S]*"msg":"stopped"/);
  });

  test('negative control: the former unprivileged settings cannot open /dev/kmsg, and say why', {
    timeout: 240_000,
  }, async () => {
    const { c, status, metrics } = await start(renderBase(), UNPRIVILEGED);
    const hint =
      /\/host\/dev\/kmsg: EPERM: the container needs privileged or the kmsg device; see docs\/install\.md/;
    await waitFor(() => hint.test(c.output()), 30_000, c.output);
    assert.equal(await metricValue(metrics, 'npd_monitor_healthy{source="kernel-monitor"}'), 0);
    // Liveness fails once the monitor stayed down past its restart backoff (a kubelet restarts the pod).
    await waitFor(async () => (await fetch(`${status}/healthz`)).status === 503, 150_000, c.output);
    assert.match(await (await fetch(`${status}/healthz`)).text(), hint);
    assert.equal(await c.terminate(30_000), 0);
  });

  test('components gpu: the GPU rules read the same /dev/kmsg in the pod', { timeout: 240_000 }, async () => {
    const { c, metrics } = await start(kustomizeWith(['gpu']));
    const m = marker('npdgpu');
    // rules/gpu.yaml: Xid 79 "GPU has fallen off the bus" (NVIDIA Xid documentation).
    kmsg(
      `NVRM: Xid (PCI:0000:${m.slice(-2)}:00): 79, pid='<unknown>', name=<unknown>, GPU has fallen off the bus.`,
    );
    await waitFor(
      async () => /GPUUnhealthy\s+True/.test(await kubectl(['describe', 'node', cp.nodeName])),
      60_000,
      c.output,
    );
    assert.equal(await metricValue(metrics, 'npd_monitor_healthy{source="gpu-monitor"}'), 1);
    assert.equal(await c.terminate(30_000), 0);
  });
});
