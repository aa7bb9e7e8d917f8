/**
 * A check's own failure (it throws, or NVML answers SUCCESS without the field it asked for) is that
 * check's error only: no NVML return code, so the session stays (no re-init, no "NVML fails"), the other
 * checks still report, the fault is counted and logged once. Control: NVML's own Unknown Error re-inits.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { createLogger } from '../../../../src/core/logger.ts';
import { NVML } from '../../../../src/host/nvml/api.ts';
import { h200 } from '../../../support/nvml-memory.ts';
import { Harness } from './harness.ts';

const ROW_REMAP = 'npd_gpu_check_errors_total{source="gpu-nvml-monitor",check="row-remap"}';

/** A harness whose warnings are kept, one parsed JSON line each. */
function logged(): { h: Harness; lines: { msg: string; level: string }[] } {
  const lines: { msg: string; level: string }[] = [];
  const logger = createLogger({ format: 'json', write: (l) => lines.push(JSON.parse(l)) });
  return { h: new Harness({ gpus: [h200(0), h200(1)], deps: { logger } }), lines };
}

/** The binding throwing inside a check: a check's own crash as the poll sees it. */
function crashRowRemap(h: Harness): void {
  h.nvml.remappedRows = () => {
    throw new TypeError("Cannot read properties of undefined (reading 'uncRows')");
  };
}

describe('GPU monitor: a check failing on its own is not NVML failing', () => {
  it('a throwing check: no re-init, the other checks still report, counted, logged once', async () => {
    const { h, lines } = logged();
    await h.start();
    assert.deepEqual(await h.metric(ROW_REMAP), [`${ROW_REMAP} 0`], 'zeroed per enabled check');
    const inits = h.nvml.calls.filter((c) => c === 'init').length;
    crashRowRemap(h);
    const g1 = h.nvml.gpus[1];
    if (g1) g1.volatileEcc = [0, 1];
    await h.advance(60_000);
    await h.advance(60_000);
    assert.equal(h.loads, 1, 'the library was not loaded again');
    assert.equal(h.nvml.calls.filter((c) => c === 'init').length, inits, 'NVML was not started again');
    assert.equal(h.nvml.initialised, true, 'the session was not shut down');
    assert.equal(h.condition()?.status, 'True');
    assert.equal(h.condition()?.reason, 'NvidiaDoubleBitError');
    assert.deepEqual(await h.metric(ROW_REMAP), [`${ROW_REMAP} 4`], 'two GPUs, two polls');
    assert.deepEqual(await h.metric('npd_gpu_nvml_errors_total{'), [], 'no NVML error counted');
    assert.ok((await h.metric('npd_gpu_monitor_state')).some((l) => l.includes('state="running"} 1')));
    const health = h.monitor.health();
    assert.equal(health.healthy, false);
    assert.match(health.detail ?? '', /row-remap on GPU 0: threw: Cannot read properties/);
    assert.doesNotMatch(health.detail ?? '', /NVML fails|restart the pod/);
    const warned = lines.filter((l) => l.level === 'warn' && l.msg.includes('failed on its own'));
    assert.equal(warned.length, 2, 'once per distinct error (GPU 0, GPU 1), not once per poll');
    await h.stop();
  });

  it('alone it is Unknown, never False; a fatal finding the check held stays True', async () => {
    const h = new Harness();
    await h.start();
    crashRowRemap(h);
    await h.advance(60_000);
    assert.equal(h.condition()?.status, 'Unknown');
    assert.match(h.condition()?.message ?? '', /row-remap on GPU 0: threw/);
    const held = new Harness();
    await held.start();
    const g = held.nvml.gpus[0];
    if (g) g.remapped = { correctable: 0, uncorrectable: 1, pending: false, failure: true };
    await held.advance(60_000);
    assert.equal(held.condition()?.reason, 'NvidiaRowRemapFailure');
    crashRowRemap(held);
    await held.advance(60_000);
    assert.equal(held.condition()?.status, 'True', 'a fault is no clear');
    assert.equal(held.condition()?.reason, 'NvidiaRowRemapFailure');
    await h.stop();
    await held.stop();
  });

  it('recovery-action: field 230 missing from a SUCCESS answer is the check fault, not NVML failing', async () => {
    const h = new Harness();
    await h.start();
    h.nvml.fieldValues = () => [];
    await h.advance(60_000);
    assert.equal(h.nvml.initialised, true);
    assert.equal(h.loads, 1);
    assert.equal(h.condition()?.status, 'Unknown');
    assert.match(h.condition()?.message ?? '', /recovery-action on GPU 0: field 230 missing/);
    const series = 'npd_gpu_check_errors_total{source="gpu-nvml-monitor",check="recovery-action"}';
    assert.deepEqual(await h.metric(series), [`${series} 1`]);
    await h.stop();
  });

  it('control: a real NVML Unknown Error (999) from a call still ends the session and inits again', async () => {
    const h = new Harness();
    await h.start();
    h.nvml.fail.set('remappedRows', NVML.UNKNOWN);
    await h.advance(60_000);
    assert.equal(h.nvml.initialised, false, 'the session was shut down');
    assert.equal(h.condition()?.status, 'Unknown');
    assert.match(h.monitor.health().detail ?? '', /NVML fails: remappedRows: Unknown Error \(999\)/);
    assert.ok(!(await h.metric(ROW_REMAP)).some((l) => !l.endsWith(' 0')), 'not a check error');
    h.nvml.fail.delete('remappedRows');
    await h.advance(10_000);
    assert.equal(h.loads, 2, 'loaded and started again after the backoff');
    assert.equal(h.nvml.initialised, true);
    assert.equal(h.condition()?.status, 'False');
    await h.stop();
  });
});
