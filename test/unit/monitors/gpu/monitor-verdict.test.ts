import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { NVML } from '../../../../src/host/nvml/api.ts';
import { h200 } from '../../../support/nvml-memory.ts';
import { Harness } from './harness.ts';

describe('GPU monitor: GPUUnhealthy from the checks', () => {
  it('a fatal finding sets it True with the first finding reason, naming every GPU; cleared: False', async () => {
    const h = new Harness({ gpus: [h200(0), h200(1)] });
    await h.start();
    assert.equal(h.condition()?.status, 'False');
    assert.equal(h.condition()?.reason, 'GPUIsHealthy');
    const [g0, g1] = h.nvml.gpus;
    if (!g0 || !g1) throw new Error('two GPUs');
    g1.volatileEcc = [0, 1];
    g0.remapped = { correctable: 0, uncorrectable: 1, pending: true, failure: false };
    await h.advance(60_000);
    const c = h.condition();
    assert.equal(c?.status, 'True');
    // ecc runs before row-remap (checks/index.ts order), whatever the GPU index.
    assert.equal(c?.reason, 'NvidiaDoubleBitError');
    assert.match(
      c?.message ?? '',
      /NvidiaDoubleBitError: GPU 1 \(0000:01:00.*; NvidiaRowRemapPending: GPU 0 \(0000:00:00/,
    );
    assert.equal(c?.evidence?.plugin, 'nvml');
    const change = h.events().filter((e) => e.message.startsWith('Node condition GPUUnhealthy is now: True'));
    assert.equal(change.length, 1);
    g1.volatileEcc = [0, 0];
    g0.remapped = { correctable: 0, uncorrectable: 1, pending: false, failure: false };
    await h.advance(60_000);
    assert.equal(
      h.condition()?.status,
      'False',
      'a GPU reset clears the volatile count and applies the remap',
    );
    assert.ok((await h.metric('npd_gpu_healthy')).some((l) => l.includes('gpu="1"') && l.endsWith(' 1')));
    await h.stop();
  });

  it('a call failing (not NOT_SUPPORTED) is Unknown, never False; control: answered again, False', async () => {
    const h = new Harness();
    await h.start();
    h.nvml.fail.set('remappedRows', NVML.NO_PERMISSION);
    await h.advance(60_000);
    assert.equal(h.condition()?.status, 'Unknown');
    assert.match(h.condition()?.message ?? '', /row-remap on GPU 0: remappedRows/);
    assert.equal(h.monitor.health().healthy, false);
    assert.ok(
      (await h.metric('npd_gpu_nvml_errors_total')).includes(
        'npd_gpu_nvml_errors_total{call="remappedRows",code="4"} 1',
      ),
    );
    h.nvml.fail.delete('remappedRows');
    await h.advance(60_000);
    assert.equal(h.condition()?.status, 'False');
    assert.equal(h.monitor.health().healthy, true);
    await h.stop();
  });

  it('a fatal finding holds True even while another call fails (it is no guess)', async () => {
    const h = new Harness();
    await h.start();
    const g = h.nvml.gpus[0];
    if (g) g.volatileEcc = [0, 3];
    h.nvml.fail.set('remappedRows', NVML.NO_PERMISSION);
    await h.advance(60_000);
    assert.equal(h.condition()?.status, 'True');
    await h.stop();
  });

  it('NOT_SUPPORTED everywhere it may be (Hopper retired pages) is False, not Unknown', async () => {
    const h = new Harness({ gpus: [h200(0, { retired: 'not-supported', remapped: 'not-supported' })] });
    await h.start();
    assert.equal(h.condition()?.status, 'False');
    await h.stop();
  });
});

describe('GPU monitor: warnings', () => {
  it('one Warning event when a warning appears, none while it holds, a new one when it comes back', async () => {
    const h = new Harness();
    await h.start();
    const g = h.nvml.gpus[0];
    if (!g) throw new Error('one GPU');
    g.remapped = { correctable: 0, uncorrectable: 600, pending: false, failure: false };
    await h.advance(60_000);
    await h.advance(60_000);
    await h.advance(60_000);
    const limit = () => h.events().filter((e) => e.reason === 'NvidiaRowRemapLimit');
    assert.equal(limit().length, 1);
    assert.equal(limit()[0]?.severity, 'warn');
    assert.equal(h.condition()?.status, 'False', 'a warning is no condition');
    g.remapped = { correctable: 0, uncorrectable: 10, pending: false, failure: false };
    await h.advance(60_000);
    g.remapped = { correctable: 0, uncorrectable: 700, pending: false, failure: false };
    await h.advance(60_000);
    assert.equal(limit().length, 2);
    assert.ok(
      (await h.metric('npd_gpu_findings')).some(
        (l) => l.includes('check="row-remap"') && l.includes('severity="warning"') && l.endsWith(' 1'),
      ),
    );
    await h.stop();
  });

  it('an SBE storm event is a Warning event; with sbe-storm disabled it is counted only', async () => {
    const h = new Harness();
    await h.start();
    h.nvml.push({ index: 0, eventType: 0x200, eventData: 0, gpuInstanceId: 0, computeInstanceId: 0 });
    await h.advance(0);
    assert.equal(h.events().filter((e) => e.reason === 'SingleBitEccErrorStorm').length, 1);
    await h.stop();
    const off = new Harness({ config: { checks: { 'sbe-storm': { enabled: false } } } });
    await off.start();
    off.nvml.push({ index: 0, eventType: 0x200, eventData: 0, gpuInstanceId: 0, computeInstanceId: 0 });
    await off.advance(0);
    assert.equal(off.events().filter((e) => e.reason === 'SingleBitEccErrorStorm').length, 0);
    await off.stop();
  });

  it('a DBE event polls at once, so the ecc check reports it without waiting for the interval', async () => {
    const h = new Harness();
    await h.start();
    const g = h.nvml.gpus[0];
    if (g) g.volatileEcc = [0, 1];
    h.nvml.push({ index: 0, eventType: 0x2, eventData: 0, gpuInstanceId: 0, computeInstanceId: 0 });
    await h.advance(0);
    assert.equal(h.condition()?.reason, 'NvidiaDoubleBitError');
    await h.stop();
  });
});
