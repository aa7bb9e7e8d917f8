import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { NVML, type RemappedRows } from '../../../../src/host/nvml/api.ts';
import { rowRemapCheck, rowRemapOptions } from '../../../../src/monitors/gpu/checks/row-remap.ts';
import { namesTheGpu, nvmlError, runCheck, stubNvml } from './checks-stub.ts';

const DEFAULTS = rowRemapOptions.parse({});
const CLEAN: RemappedRows = { correctable: 0, uncorrectable: 0, pending: false, failure: false };

function rows(over: Partial<RemappedRows>) {
  return stubNvml({ remappedRows: () => ({ ...CLEAN, ...over }) });
}

describe('row-remap check', () => {
  it('defaults to DCGM limit of 512 uncorrectable remaps', () => {
    assert.equal(DEFAULTS.uncorrectableWarning, 512);
  });

  it('a pending remap is fatal (reset the GPU), naming the GPU', () => {
    const r = runCheck(rowRemapCheck, rows({ uncorrectable: 1, pending: true }), DEFAULTS);
    assert.deepEqual(
      r.findings.map((f) => [f.severity, f.reason]),
      [['fatal', 'NvidiaRowRemapPending']],
    );
    assert.ok(namesTheGpu(r.findings[0]?.message ?? ''));
    assert.equal(r.gauges?.remapped_rows_pending, 1);
  });

  it('a failed remap is fatal (replace the GPU)', () => {
    const r = runCheck(rowRemapCheck, rows({ failure: true }), DEFAULTS);
    assert.deepEqual(
      r.findings.map((f) => [f.severity, f.reason]),
      [['fatal', 'NvidiaRowRemapFailure']],
    );
  });

  it('512 uncorrectable remaps is a warning; 511 is nothing (control)', () => {
    const at = runCheck(rowRemapCheck, rows({ uncorrectable: 512 }), DEFAULTS);
    assert.deepEqual(
      at.findings.map((f) => [f.severity, f.reason]),
      [['warning', 'NvidiaRowRemapLimit']],
    );
    assert.deepEqual(
      runCheck(rowRemapCheck, rows({ uncorrectable: 511, correctable: 40 }), DEFAULTS).findings,
      [],
    );
  });

  it('NOT_SUPPORTED (pre-Ampere, MIG) is no finding and no error; another error is no verdict', () => {
    const none = stubNvml({ remappedRows: () => nvmlError('remappedRows', NVML.NOT_SUPPORTED) });
    assert.deepEqual(runCheck(rowRemapCheck, none, DEFAULTS), { findings: [] });
    const bad = stubNvml({ remappedRows: () => nvmlError('remappedRows', NVML.NO_PERMISSION) });
    assert.equal(runCheck(rowRemapCheck, bad, DEFAULTS).error?.code, NVML.NO_PERMISSION);
  });
});
