// The image run with the gpu component's settings (env, args, config: test/container/pod-flags.ts from
// the rendered deploy/components/gpu) and the fake NVML (test/support/fake-nvml) where the NVIDIA
// container runtime puts the real one in this image. The image has no /etc/debian_version, so the
// runtime's legacy mode (libnvidia-container) mounts the driver's libraries into /usr/lib64 and runs
// ldconfig in the container, whose /etc/ld.so.cache is how the loader finds libnvidia-ml.so.1 there:
// the image's own search path is /usr/lib/x86_64-linux-gnu and /usr/lib, and it ships no cache. The test
// does both: the fake bind-mounted at /usr/lib64/libnvidia-ml.so.1 and a cache made by the same
// ldconfig call. The fake's state file lives in a mounted folder, so the test rewrites it while the pod
// runs. Checks: a healthy H200 on /metrics and GPUUnhealthy False; a double-bit ECC error makes
// GPUUnhealthy True on /conditions and the Node. Without the mount the monitor says there is no NVML
// and sets no GPU problem, /healthz stays 200. The runtime's CDI mode mounts the libraries at the host's
// path (/usr/lib64 on RHEL-family hosts) and older toolkits wrote no cache into images without one: the
// component's LD_LIBRARY_PATH=/usr/lib64 finds the fake there without a cache, and without that
// variable it is not found (the control). The pod's /dev/kmsg is a quiet FIFO (withQuietKmsg): the
// host's ring holds other tests' Xid lines, which gpu.yaml would rightly report as GPUUnhealthy.
//   npm run test:container        (builds the image first)
import assert from 'node:assert/strict';
import {
  closeSync,
  constants,
  copyFileSync,
  mkdirSync,
  mkdtempSync,
  openSync,
  rmSync,
  writeFileSync,
} from 'node:fs';
import { execFileSync } from 'node:child_process';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { type Doc, kustomizeWith } from '../deploy/support.ts';
import { type ControlPlane, startControlPlane } from '../e2e/harness/controlplane.ts';
import { metricValue, waitFor } from '../support/agent-process.ts';
import { buildFakeNvml } from '../support/fake-nvml/build.ts';
import { appendFakeNvmlEvents, writeFakeNvmlState } from '../support/fake-nvml/state.ts';
import { serviceAccountDir, startPod } from './pod.ts';
import { type Container, containerSkip, IMAGE, imageExists } from './podman.ts';

const skip = containerSkip();
/** Where libnvidia-container's legacy mode puts the driver's libraries in an image without /etc/debian_version. */
const LIB_DIR = '/usr/lib64';
const STATE_DIR = '/run/fake-nvml';
const SOURCE = 'gpu-nvml-monitor';
/** EVENT.DOUBLE_BIT_ECC (src/host/nvml/api.ts, nvmlEventTypeDoubleBitEccError). */
const DBE_EVENT = 0x2;
/** The fake's GPU 0: ../shared/fixtures/gpu-h200/nvml.json's H200. */
const UUID = 'GPU-9571ff8c-5bff-8cfd-14bc-40686eeaa1f3';

interface Condition {
  type: string;
  status: string;
  reason: string;
}

/** The folder the runtime's ldconfig would write: the library in LIB_DIR and the cache naming it. */
function loaderRoot(work: string, lib: string): string {
  const root = mkdtempSync(join(work, 'ldroot-'));
  mkdirSync(join(root, 'etc'));
  mkdirSync(join(root, LIB_DIR), { recursive: true });
  writeFileSync(join(root, 'etc/ld.so.conf'), '');
  copyFileSync(lib, join(root, LIB_DIR, 'libnvidia-ml.so.1'));
  // nvc_ldcache.c: ldconfig -f /etc/ld.so.conf -C /etc/ld.so.cache <libs dir>, chrooted in the rootfs.
  execFileSync('ldconfig', ['-r', root, '-f', '/etc/ld.so.conf', '-C', '/etc/ld.so.cache', LIB_DIR]);
  return root;
}

/**
 * The component's documents with the pod's /dev/kmsg a quiet FIFO: the host's kernel ring holds the Xid
 * lines other tests wrote (daemonset.test.ts' Xid 79, minutes ago), which gpu.yaml's 5-minute lookback
 * rightly reports as GPUUnhealthy; here the condition must be the NVML monitor's alone.
 */
function withQuietKmsg(docs: readonly Doc[], fifo: string): Doc[] {
  return docs.map((d) => {
    if (d.kind !== 'DaemonSet') return d;
    const copy = structuredClone(d) as Doc & {
      spec: { template: { spec: { volumes: { name: string; hostPath?: { path: string } }[] } } };
    };
    const kmsg = copy.spec.template.spec.volumes.find((v) => v.name === 'kmsg');
    assert.ok(kmsg?.hostPath, 'the DaemonSet mounts the host /dev/kmsg as volume kmsg');
    kmsg.hostPath.path = fifo;
    return copy;
  });
}

describe('the image with the gpu component and a fake NVML (podman, runc)', { skip }, () => {
  let cp: ControlPlane;
  let home: string;
  let work: string;
  let saDir: string;
  let lib: string;
  let fifo: string;
  let fifoWriter: number | undefined;
  const running = new Set<Container>();
  const kubectl = (args: string[]) => cp.kubectl(args, { home });

  before(
    async () => {
      assert.ok(imageExists(), `${IMAGE} is not built: run test/container/build-image.sh`);
      lib = buildFakeNvml();
      cp = await startControlPlane();
      home = mkdtempSync(join(tmpdir(), 'npd-ct-home-'));
      work = mkdtempSync(join(tmpdir(), 'npd-ct-gpu-'));
      saDir = await serviceAccountDir(cp, home, work);
      fifo = join(work, 'kmsg');
      execFileSync('mkfifo', [fifo]);
      // Held open for writing: a FIFO without a writer polls as hung up, which /dev/kmsg never does.
      fifoWriter = openSync(fifo, constants.O_RDWR | constants.O_NONBLOCK);
    },
    { timeout: 60 * 60_000 },
  );

  after(async () => {
    for (const c of running) c.remove();
    if (fifoWriter !== undefined) closeSync(fifoWriter);
    await cp?.stop();
    for (const d of [home, work]) if (d) rmSync(d, { recursive: true, force: true });
  });

  const gpuDocs = () => withQuietKmsg(kustomizeWith(['gpu']), fifo);
  async function start(docs: readonly Doc[], flags: string[]) {
    const pod = await startPod(cp, saDir, work, docs, { flags });
    running.add(pod.c);
    return pod;
  }
  const conditions = async (status: string): Promise<Condition[]> =>
    (await (await fetch(`${status}/conditions`)).json()) as Condition[];
  const gpuCondition = async (status: string) =>
    (await conditions(status)).find((c) => c.type === 'GPUUnhealthy');
  /** npd_gpu_healthy of the fake's GPU 0, whatever the other labels. */
  const gpuHealthy = async (metrics: string): Promise<number | undefined> => {
    const text = await (await fetch(metrics)).text();
    const m = new RegExp(`^npd_gpu_healthy\\{[^}]*uuid="${UUID}"[^}]*\\} (\\d+)$`, 'm').exec(text);
    return m ? Number(m[1]) : undefined;
  };
  const clearGpuCondition = () =>
    kubectl([
      'patch',
      'node',
      cp.nodeName,
      '--subresource=status',
      '--type=strategic',
      '-p',
      '{"status":{"conditions":[{"type":"GPUUnhealthy","$patch":"delete"}]}}',
    ]);
  const state = (metrics: string, s: string) =>
    metricValue(metrics, `npd_gpu_monitor_state{source="${SOURCE}",state="${s}"}`);

  test('without the library: no NVML, no GPU problem, /healthz 200', { timeout: 240_000 }, async () => {
    // A condition an earlier pod left on the Node would be read back at start (as NPD does).
    await clearGpuCondition();
    const { c, status, metrics } = await start(gpuDocs(), []);
    await waitFor(async () => (await state(metrics, 'no_library')) === 1, 60_000, c.output);
    assert.match(c.output(), /GPU monitor idle: no NVML library \(libnvidia-ml\.so\.1\)/);
    const r = await fetch(`${status}/healthz`);
    assert.equal(r.status, 200, await r.text());
    const gpu = await gpuCondition(status);
    assert.notEqual(gpu?.status, 'True');
    assert.notEqual(gpu?.status, 'Unknown');
    assert.equal(await state(metrics, 'running'), 0);
    assert.equal(await c.terminate(30_000), 0);
  });

  test('the fake NVML where the runtime puts it: a healthy H200, then a double-bit ECC error', {
    timeout: 300_000,
  }, async () => {
    const root = loaderRoot(work, lib);
    const stateDir = mkdtempSync(join(work, 'nvml-state-'));
    writeFakeNvmlState(join(stateDir, 'nvml-state'), { gpus: [{}] });
    writeFileSync(join(stateDir, 'nvml-events'), '');
    const { c, status, metrics } = await start(gpuDocs(), [
      `--volume=${join(root, LIB_DIR, 'libnvidia-ml.so.1')}:${LIB_DIR}/libnvidia-ml.so.1:ro`,
      `--volume=${join(root, 'etc/ld.so.cache')}:/etc/ld.so.cache:ro`,
      `--volume=${stateDir}:${STATE_DIR}:ro`,
      `--env=FAKE_NVML_STATE=${STATE_DIR}/nvml-state`,
      `--env=FAKE_NVML_EVENTS=${STATE_DIR}/nvml-events`,
    ]);
    await waitFor(async () => (await state(metrics, 'running')) === 1, 60_000, c.output);
    assert.ok(c.output().includes(`NVML: 0: NVIDIA H200 ${UUID}`), c.output().slice(-2000));
    await waitFor(async () => (await gpuHealthy(metrics)) === 1, 60_000, c.output);
    assert.equal((await gpuCondition(status))?.status, 'False', 'control: no problem before the error');
    assert.equal((await fetch(`${status}/healthz`)).status, 200);

    // The driver counts the error and delivers the event; the monitor polls at the event.
    writeFakeNvmlState(join(stateDir, 'nvml-state'), { gpus: [{ ecc: { uncorrectedVolatile: 1 } }] });
    appendFakeNvmlEvents(join(stateDir, 'nvml-events'), { index: 0, type: DBE_EVENT, data: 0 });
    await waitFor(async () => (await gpuCondition(status))?.status === 'True', 90_000, c.output);
    assert.equal((await gpuCondition(status))?.reason, 'NvidiaDoubleBitError');
    assert.equal(await gpuHealthy(metrics), 0);
    await waitFor(
      async () =>
        /GPUUnhealthy\s+True\s.*NvidiaDoubleBitError/.test(await kubectl(['describe', 'node', cp.nodeName])),
      60_000,
      c.output,
    );
    assert.equal(await c.terminate(30_000), 0, c.output().slice(-2000));
  });

  test("no cache (CDI mode on an /usr/lib64 host, older toolkits): found through the component's LD_LIBRARY_PATH; control: not without it", {
    timeout: 240_000,
  }, async () => {
    const root = loaderRoot(work, lib);
    const mount = `--volume=${join(root, LIB_DIR, 'libnvidia-ml.so.1')}:${LIB_DIR}/libnvidia-ml.so.1:ro`;
    const found = await start(gpuDocs(), [mount]);
    await waitFor(async () => (await state(found.metrics, 'running')) === 1, 60_000, found.c.output);
    assert.equal(await found.c.terminate(30_000), 0);
    const control = await start(gpuDocs(), [mount, '--env=LD_LIBRARY_PATH=']);
    await waitFor(async () => (await state(control.metrics, 'no_library')) === 1, 60_000, control.c.output);
    assert.equal(await control.c.terminate(30_000), 0);
  });
});
