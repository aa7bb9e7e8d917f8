/**
 * The device count (nvmlDeviceGetCount_v2) answering GPU_IS_LOST, at start or in a poll, is a GPU fallen
 * off the bus: GPUUnhealthy True with GPUFallenOffBus, naming the PCI bus's GPUs NVML did not enumerate,
 * held until the agent ends. Control: the count answering another error has no verdict (Unknown).
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { NVML } from '../../../../src/host/nvml/api.ts';
import { h200 } from '../../../support/nvml-memory.ts';
import { Harness } from './harness.ts';

describe('GPU monitor: the device count answering GPU_IS_LOST', () => {
  it('at start: True, GPUFallenOffBus, naming the bus; held after NVML answers again', async () => {
    const h = new Harness({ gpus: [h200(0), h200(1)] });
    h.nvml.fail.set('deviceCount', NVML.GPU_IS_LOST);
    await h.start();
    const c = h.condition();
    assert.equal(c?.status, 'True');
    assert.equal(c?.reason, 'GPUFallenOffBus');
    assert.match(
      c?.message ?? '',
      /a GPU has fallen off the bus: deviceCount answered GPU_IS_LOST before NVML enumerated any GPU \(on the PCI bus: 0000:00:00, 0000:01:00\)/,
    );
    assert.ok(!h.seen.some((s) => s.conditions.some((x) => x.status !== 'True')), 'never Unknown or False');
    assert.match(h.monitor.health().detail ?? '', /a GPU has fallen off the bus/);
    assert.doesNotMatch(h.monitor.health().detail ?? '', /restart the pod/);
    h.nvml.fail.delete('deviceCount');
    await h.advance(10_000);
    assert.equal(h.loads, 2, 'NVML started again to watch the others');
    assert.equal(h.monitor.health().healthy, true);
    await h.advance(60_000);
    assert.equal(h.condition()?.status, 'True', 'held until the agent ends, as a lost GPU is');
    assert.equal(h.condition()?.reason, 'GPUFallenOffBus');
    await h.stop();
  });

  it('in a poll: True without a re-init, naming the GPU that stopped answering; held', async () => {
    const h = new Harness({ gpus: [h200(0), h200(1)] });
    await h.start();
    assert.equal(h.condition()?.status, 'False');
    h.nvml.fail.set('deviceCount', NVML.GPU_IS_LOST);
    h.nvml.fail.set('eccEnabled:1', NVML.GPU_IS_LOST);
    await h.advance(60_000);
    assert.equal(h.condition()?.status, 'True');
    assert.equal(h.condition()?.reason, 'GPUFallenOffBus');
    assert.match(
      h.condition()?.message ?? '',
      /a GPU has fallen off the bus: deviceCount answered GPU_IS_LOST; on the PCI bus and not enumerated by NVML: 0000:01:00/,
    );
    assert.equal(h.nvml.initialised, true, 'GPU_IS_LOST is no reason to end the session');
    assert.equal(h.loads, 1);
    assert.ok(
      (await h.metric('npd_gpu_nvml_errors_total')).includes(
        'npd_gpu_nvml_errors_total{call="deviceCount",code="15"} 1',
      ),
    );
    h.nvml.fail.clear();
    await h.advance(60_000);
    assert.equal(h.condition()?.reason, 'GPUFallenOffBus', 'held: a GPU off the bus does not heal');
    await h.stop();
  });

  it('in a poll with every GPU still answering: True, saying the count answered GPU_IS_LOST', async () => {
    const h = new Harness({ gpus: [h200(0), h200(1)] });
    await h.start();
    h.nvml.fail.set('deviceCount', NVML.GPU_IS_LOST);
    await h.advance(60_000);
    assert.equal(h.condition()?.reason, 'GPUFallenOffBus');
    assert.match(
      h.condition()?.message ?? '',
      /a GPU has fallen off the bus: deviceCount answered GPU_IS_LOST$/,
    );
    await h.stop();
  });

  it('control: the count answering another error is Unknown, never True or False', async () => {
    const start = new Harness();
    start.nvml.fail.set('deviceCount', NVML.UNKNOWN);
    await start.start();
    assert.equal(start.condition()?.status, 'Unknown');
    assert.equal(start.condition()?.reason, 'NVMLUnavailable');
    await start.stop();
    const poll = new Harness();
    await poll.start();
    poll.nvml.fail.set('deviceCount', NVML.NO_PERMISSION);
    await poll.advance(60_000);
    assert.equal(poll.condition()?.status, 'Unknown');
    assert.match(poll.condition()?.message ?? '', /device-count: deviceCount/);
    await poll.stop();
  });
});
