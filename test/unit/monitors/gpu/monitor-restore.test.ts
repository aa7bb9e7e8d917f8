/**
 * An agent restart in the same boot: NVML does not replay the fatal Xid its event wait delivered, so
 * the GPUUnhealthy the Node shows for it (or for a GPU fallen off the bus) is held as before, with its
 * lastTransitionTime: a DaemonSet rollout must not end a repair controller's wait, nor restart it.
 * Controls: a check's finding is read again at the next poll and clears when the GPU is healthy; a
 * reason change while True keeps the time.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { Condition } from '../../../../src/core/types.ts';
import { NVML } from '../../../../src/host/nvml/api.ts';
import { h200 } from '../../../support/nvml-memory.ts';
import { Harness } from './harness.ts';

function onNode(h: Harness, reason: string): Condition {
  return {
    type: 'GPUUnhealthy',
    status: 'True',
    transition: h.clock.now() - 3_600_000,
    reason,
    message: `${reason}: GPU 0 (0000:00:00.0, GPU-0) reported Xid 79 (GPU has fallen off the bus)`,
  };
}

async function restarted(reason: string): Promise<{ h: Harness; node: Condition }> {
  const h = new Harness({ gpus: [h200(0)] });
  await h.start();
  assert.equal(h.condition()?.status, 'False');
  const node = onNode(h, reason);
  h.monitor.restore([node]);
  return { h, node };
}

describe('GPU monitor: restore after an agent restart', () => {
  for (const reason of ['NvidiaXID79Error', 'GPUFallenOffBus']) {
    it(`holds ${reason} through healthy polls, reason, message and time as on the Node`, async () => {
      const { h, node } = await restarted(reason);
      await h.advance(60_000);
      await h.advance(60_000);
      const c = h.condition();
      assert.equal(c?.status, 'True');
      assert.equal(c?.reason, node.reason);
      assert.equal(c?.message, node.message, 'a second restart reads the same message');
      assert.equal(c?.transition, node.transition);
      await h.stop();
    });
  }

  it('keeps it True while NVML fails (held findings survive an error)', async () => {
    const { h, node } = await restarted('NvidiaXID79Error');
    h.nvml.fail.set('deviceGetCount', NVML.UNKNOWN);
    await h.advance(60_000);
    assert.equal(h.condition()?.status, 'True');
    assert.equal(h.condition()?.transition, node.transition);
    await h.stop();
  });

  for (const reason of ['NvidiaDoubleBitError', 'NvidiaRowRemapPending', 'NVMLUnavailable']) {
    it(`control: ${reason} is not held; the next poll of a healthy GPU says False`, async () => {
      const { h } = await restarted(reason);
      await h.advance(60_000);
      assert.equal(h.condition()?.status, 'False');
      await h.stop();
    });
  }

  it('keeps only the held findings of a message naming several; the others are the checks to find', async () => {
    const h = new Harness({ gpus: [h200(0), h200(1)] });
    await h.start();
    const xid = 'GPU 0 (0000:00:00.0) reported Xid 79 (GPU has fallen off the bus); the driver says so';
    h.monitor.restore([
      {
        ...onNode(h, 'NvidiaXID79Error'),
        message: `NvidiaXID79Error: ${xid}; NvidiaRowRemapPending: GPU 1 (0000:01:00.0) has a remap pending`,
      },
    ]);
    await h.advance(60_000);
    assert.equal(h.condition()?.message, `NvidiaXID79Error: ${xid}`);
    await h.stop();
  });

  it('a GPU still lost after the restart is named once, not once per restart', async () => {
    const lostAtStart = async (): Promise<Harness> => {
      const h = new Harness({ gpus: [h200(0), h200(1)] });
      h.nvml.fail.set('deviceCount', NVML.GPU_IS_LOST);
      await h.start();
      return h;
    };
    const first = await lostAtStart();
    const before = first.condition();
    await first.stop();
    if (!before) throw new Error('a condition');
    const second = await lostAtStart();
    second.monitor.restore([{ ...before, transition: before.transition - 60_000 }]);
    await second.advance(10_000);
    await second.advance(60_000);
    assert.equal(second.condition()?.message, before.message);
    assert.equal(second.condition()?.transition, before.transition - 60_000);
    await second.stop();
  });

  it('restored before start: the first poll publishes it True with the Node time', async () => {
    const h = new Harness({ gpus: [h200(0)] });
    const node = onNode(h, 'NvidiaXID79Error');
    h.monitor.restore([node]);
    await h.start();
    assert.deepEqual(
      h.seen.map((s) => s.conditions[0]?.status),
      ['True'],
      'never False first',
    );
    assert.equal(h.condition()?.transition, node.transition);
    await h.stop();
  });

  it('without a library: no condition published, restored or not', async () => {
    const h = new Harness({ loader: () => new Error('libnvidia-ml.so.1: cannot open shared object file') });
    await h.start();
    h.monitor.restore([onNode(h, 'NvidiaXID79Error')]);
    await h.advance(60_000);
    assert.deepEqual(
      h.seen.flatMap((s) => s.conditions),
      [],
    );
    await h.stop();
  });

  it('a new reason while True keeps lastTransitionTime; a status change moves it', async () => {
    const h = new Harness({ gpus: [h200(0)] });
    await h.start();
    const g = h.nvml.gpus[0];
    if (!g) throw new Error('one GPU');
    g.remapped = { correctable: 0, uncorrectable: 1, pending: true, failure: false };
    await h.advance(60_000);
    const since = h.condition()?.transition;
    assert.equal(h.condition()?.reason, 'NvidiaRowRemapPending');
    g.volatileEcc = [0, 1];
    await h.advance(60_000);
    assert.equal(h.condition()?.reason, 'NvidiaDoubleBitError', 'ecc is checked before row-remap');
    assert.equal(h.condition()?.transition, since);
    g.volatileEcc = [0, 0];
    g.remapped = { correctable: 0, uncorrectable: 1, pending: false, failure: false };
    await h.advance(60_000);
    assert.equal(h.condition()?.status, 'False');
    assert.equal(h.condition()?.transition, h.clock.now());
    await h.stop();
  });
});
