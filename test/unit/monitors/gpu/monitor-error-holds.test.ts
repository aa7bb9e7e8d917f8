/**
 * An NVML error in one poll is no clear: a check that held a fatal finding and then cannot answer keeps
 * it, so GPUUnhealthy stays True with its lastTransitionTime (repair controllers time their grace
 * period from it) instead of flapping True -> Unknown -> True. Controls: the same error with nothing held
 * is Unknown (never False on a guess), and a clean answer without the fault clears it.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { NVML } from '../../../../src/host/nvml/api.ts';
import { h200 } from '../../../support/nvml-memory.ts';
import { Harness } from './harness.ts';

async function withDoubleBitError(): Promise<Harness> {
  const h = new Harness({ gpus: [h200(0)] });
  await h.start();
  const g = h.nvml.gpus[0];
  if (g) g.volatileEcc = [0, 1];
  await h.advance(60_000);
  assert.equal(h.condition()?.status, 'True');
  assert.equal(h.condition()?.reason, 'NvidiaDoubleBitError');
  return h;
}

describe('GPU monitor: an NVML error is no clear', () => {
  it('a held double-bit error stays True, transition unchanged, through polls the ECC call fails', async () => {
    const h = await withDoubleBitError();
    const since = h.condition()?.transition;
    h.nvml.fail.set('totalEccErrors', NVML.NO_PERMISSION);
    await h.advance(60_000);
    await h.advance(60_000);
    assert.equal(h.condition()?.status, 'True');
    assert.equal(h.condition()?.reason, 'NvidiaDoubleBitError');
    assert.equal(h.condition()?.transition, since, 'lastTransitionTime did not move');
    assert.equal(h.nvml.initialised, true, 'NO_PERMISSION needs no new session');
    await h.stop();
  });

  it('control: with nothing held the same error is Unknown, and a clean answer clears a held one', async () => {
    const fresh = new Harness({ gpus: [h200(0)] });
    await fresh.start();
    fresh.nvml.fail.set('totalEccErrors', NVML.NO_PERMISSION);
    await fresh.advance(60_000);
    assert.equal(fresh.condition()?.status, 'Unknown');
    await fresh.stop();
    const h = await withDoubleBitError();
    const g = h.nvml.gpus[0];
    if (g) g.volatileEcc = [0, 0];
    await h.advance(60_000);
    assert.equal(h.condition()?.status, 'False', 'the driver reloaded: the counter is 0 again');
    await h.stop();
  });
});
