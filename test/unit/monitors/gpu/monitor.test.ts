import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { NVML, type Nvml } from '../../../../src/host/nvml/api.ts';
import { h200, nvmlErr } from '../../../support/nvml-memory.ts';
import { Harness, pciRoot } from './harness.ts';

describe('GPU monitor: nothing to watch', () => {
  it('without the library reports no condition and waits, saying why', async () => {
    const h = new Harness({ loader: () => new Error('libnvidia-ml.so.1: cannot open shared object file') });
    await h.start();
    assert.equal(h.condition(), undefined);
    assert.ok(h.seen.every((s) => s.conditions.length === 0));
    const health = h.monitor.health();
    assert.equal(health.waiting, true);
    assert.match(health.detail ?? '', /no NVML library \(libnvidia-ml\.so\.1\): .*cannot open/);
    assert.ok((await h.metric('npd_gpu_monitor_state')).some((l) => l.includes('state="no_library"} 1')));
    await h.stop();
  });

  it('looks again each interval: a library installed after start (GPU Operator) is found', async () => {
    let installed = false;
    const memory: { nvml?: Nvml } = {};
    const h: Harness = new Harness({
      loader: () => (installed && memory.nvml ? memory.nvml : new Error('libnvidia-ml.so.1: not found')),
    });
    memory.nvml = h.nvml;
    await h.start();
    await h.advance(60_000);
    assert.equal(h.condition(), undefined);
    installed = true;
    await h.advance(60_000);
    assert.equal(h.condition()?.status, 'False');
    assert.equal(h.monitor.health().healthy, true);
    await h.stop();
  });

  it('without a GPU (count 0, none on the PCI bus) reports no condition and waits', async () => {
    const h = new Harness({ gpus: [], root: pciRoot([]) });
    await h.start();
    assert.ok(h.seen.every((s) => s.conditions.length === 0));
    assert.equal(h.monitor.health().waiting, true);
    assert.match(h.monitor.health().detail ?? '', /no NVIDIA GPU/);
    // Control: the same empty node with one GPU reports the condition.
    const c = new Harness({ gpus: [h200(0)] });
    await c.start();
    assert.equal(c.condition()?.status, 'False');
    await h.stop();
    await c.stop();
  });

  it('driver not loaded on a node whose PCI bus shows no NVIDIA GPU is no fault', async () => {
    const h = new Harness({ root: pciRoot([]) });
    h.nvml.fail.set('init', NVML.DRIVER_NOT_LOADED);
    await h.start();
    assert.equal(h.condition(), undefined);
    assert.equal(h.monitor.health().waiting, true);
    await h.stop();
  });

  it('driver not loaded while the PCI bus shows an NVIDIA GPU is Unknown, not waiting', async () => {
    const h = new Harness({ root: pciRoot(['0000:3b:00.0']) });
    h.nvml.fail.set('init', NVML.DRIVER_NOT_LOADED);
    await h.start();
    assert.equal(h.condition()?.status, 'Unknown');
    assert.notEqual(h.monitor.health().waiting, true);
    await h.stop();
  });
});

describe('GPU monitor: NVML failing', () => {
  it('init Unknown Error: Unknown (never False), unhealthy with the fix, counted, retried with backoff', async () => {
    const h = new Harness();
    h.nvml.fail.set('init', NVML.UNKNOWN);
    await h.start();
    const c = h.condition();
    assert.equal(c?.status, 'Unknown');
    assert.equal(c?.reason, 'NVMLUnavailable');
    assert.match(c?.message ?? '', /init: Unknown Error \(999\)/);
    const health = h.monitor.health();
    assert.equal(health.healthy, false);
    assert.notEqual(health.waiting, true);
    assert.match(health.detail ?? '', /restart the pod; see docs\/troubleshooting\.md/);
    assert.ok(
      (await h.metric('npd_gpu_nvml_errors_total')).includes(
        'npd_gpu_nvml_errors_total{call="init",code="999"} 1',
      ),
    );
    assert.ok(!h.seen.some((s) => s.conditions.some((x) => x.status === 'False')), 'never False on a guess');
    // Backoff: 10 s, then 20 s. Still failing at the first retry, recovered by the second.
    await h.advance(10_000);
    assert.equal(h.condition()?.status, 'Unknown');
    h.nvml.fail.delete('init');
    await h.advance(19_000);
    assert.equal(h.condition()?.status, 'Unknown', 'the second retry waits 20 s');
    await h.advance(1_000);
    assert.equal(h.condition()?.status, 'False');
    assert.equal(h.monitor.health().healthy, true);
    await h.stop();
  });

  it('LIB_RM_VERSION_MISMATCH in a poll ends the session: Unknown, then init again', async () => {
    const h = new Harness();
    await h.start();
    assert.equal(h.condition()?.status, 'False');
    h.nvml.fail.set('eccEnabled', NVML.LIB_RM_VERSION_MISMATCH);
    await h.advance(60_000);
    assert.equal(h.condition()?.status, 'Unknown');
    assert.ok(
      (await h.metric('npd_gpu_nvml_errors_total')).includes(
        'npd_gpu_nvml_errors_total{call="eccEnabled",code="18"} 1',
      ),
      'counted once',
    );
    assert.equal(h.nvml.initialised, false, 'the session was shut down');
    h.nvml.fail.delete('eccEnabled');
    await h.advance(10_000);
    assert.equal(h.condition()?.status, 'False');
    await h.stop();
  });
});

describe('GPU monitor: Xid events', () => {
  it('one event per Xid with its occurrence; a fatal code holds GPUUnhealthy True', async () => {
    // NVML's "00000000:3B:00.0" becomes the kernel log's "0000:3b:00".
    const h = new Harness({ gpus: [h200(0), h200(0x3b)] });
    await h.start();
    assert.equal(h.condition()?.status, 'False');
    h.nvml.xid(1, 79);
    await h.advance(0);
    const xid = h.events().filter((e) => e.reason === 'NVRMXid79');
    assert.equal(xid.length, 1);
    assert.deepEqual(xid[0]?.occurrence, {
      kind: 'xid',
      code: 79,
      busId: '0000:3b:00',
      uuid: h.nvml.gpus[1]?.uuid,
    });
    assert.equal(h.condition()?.status, 'True');
    assert.equal(h.condition()?.reason, 'NvidiaXID79Error');
    assert.match(h.condition()?.message ?? '', /GPU 1 \(0000:3b:00, GPU-/);
    await h.advance(600_000);
    assert.equal(h.condition()?.status, 'True', 'held until reboot');
    await h.stop();
  });

  it('an application Xid (31) is an event only; an unknown Xid (999) is reported as such', async () => {
    const h = new Harness();
    await h.start();
    h.nvml.xid(0, 31);
    h.nvml.xid(0, 999);
    await h.advance(0);
    assert.equal(h.events().filter((e) => e.reason === 'NVRMXid31').length, 1);
    const unknown = h.events().find((e) => e.occurrence?.code === 999);
    assert.equal(unknown?.reason, 'NVRMXid');
    assert.match(unknown?.message ?? '', /unknown Xid \(999\)/);
    assert.equal(h.condition()?.status, 'False');
    await h.stop();
  });

  it('stop() ends the event wait within one wait and nothing is emitted after', async () => {
    const h = new Harness();
    await h.start();
    assert.equal(h.nvml.pendingWaits, 1);
    const stopping = h.monitor.stop();
    await h.advance(1000);
    await stopping;
    assert.equal(h.nvml.pendingWaits, 0);
    assert.ok(h.nvml.calls.includes('eventSetFree'));
    const waits = h.nvml.calls.filter((c) => c === 'eventWait').length;
    const count = h.seen.length;
    h.nvml.xid(0, 79);
    await h.advance(120_000);
    assert.equal(h.nvml.calls.filter((c) => c === 'eventWait').length, waits);
    assert.equal(h.seen.length, count);
  });
});

describe('GPU monitor: lost GPUs', () => {
  it('GPU_IS_LOST from a call is fallen off the bus (fatal), naming the GPU', async () => {
    const h = new Harness({ gpus: [h200(0), h200(1)] });
    await h.start();
    h.nvml.fail.set('eccEnabled:1', NVML.GPU_IS_LOST);
    await h.advance(60_000);
    assert.equal(h.condition()?.status, 'True');
    assert.equal(h.condition()?.reason, 'GPUFallenOffBus');
    assert.match(h.condition()?.message ?? '', /GPU 1 \(0000:01:00.*fallen off the bus/);
    await h.stop();
  });

  it('the event wait answering GPU_IS_LOST polls at once to find the GPU, and backs off instead of spinning', async () => {
    const h = new Harness({ gpus: [h200(0), h200(1)] });
    await h.start();
    h.nvml.fail.set('eccEnabled:0', NVML.GPU_IS_LOST);
    const waits = () => h.nvml.calls.filter((c) => c === 'eventWait').length;
    h.nvml.push(nvmlErr('eventWait', NVML.GPU_IS_LOST));
    await h.advance(0);
    assert.equal(h.condition()?.reason, 'GPUFallenOffBus');
    assert.match(h.condition()?.message ?? '', /GPU 0 \(0000:00:00/);
    assert.doesNotMatch(h.condition()?.message ?? '', /GPU 1 /);
    const after = waits();
    await h.advance(999);
    assert.equal(waits(), after, 'no wait before the 1 s backoff');
    await h.advance(1);
    assert.equal(waits(), after + 1);
    assert.ok(
      (await h.metric('npd_gpu_nvml_errors_total')).includes(
        'npd_gpu_nvml_errors_total{call="eventWait",code="15"} 1',
      ),
    );
    await h.stop();
  });

  it('a GpuUnavailableError event holds the GPU fallen off the bus; a healthy poll does not clear it', async () => {
    const h = new Harness();
    await h.start();
    h.nvml.push({ index: 0, eventType: 0x4000, eventData: 0, gpuInstanceId: 0, computeInstanceId: 0 });
    await h.advance(0);
    assert.equal(h.condition()?.reason, 'GPUFallenOffBus');
    await h.advance(60_000);
    assert.equal(h.condition()?.status, 'True');
    assert.ok((await h.metric('npd_gpu_healthy')).some((l) => l.includes('gpu="0"') && l.endsWith(' 0')));
    await h.stop();
  });

  it('an Xid between polls keeps the last poll findings in the condition', async () => {
    const h = new Harness();
    await h.start();
    const g = h.nvml.gpus[0];
    if (g) g.volatileEcc = [0, 1];
    await h.advance(60_000);
    assert.equal(h.condition()?.reason, 'NvidiaDoubleBitError');
    h.nvml.xid(0, 48);
    await h.advance(0);
    assert.match(h.condition()?.message ?? '', /NvidiaXID48Error: .*; NvidiaDoubleBitError: /);
    await h.stop();
  });
});
