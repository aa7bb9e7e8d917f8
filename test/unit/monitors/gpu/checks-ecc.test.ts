import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { NVML } from '../../../../src/host/nvml/api.ts';
import { eccCheck } from '../../../../src/monitors/gpu/checks/ecc.ts';
import { namesTheGpu, nvmlError, runCheck, stubNvml } from './checks-stub.ts';

/** ECC on, `uncorrected` volatile uncorrectable and 5 corrected errors. */
function ecc(uncorrected: number, enabled = true) {
  return stubNvml({
    eccEnabled: () => enabled,
    totalEccErrors: (_d, type) => (type === 1 ? uncorrected : 5),
  });
}

describe('ecc check', () => {
  it('a volatile uncorrectable error is fatal NvidiaDoubleBitError, naming the GPU', () => {
    const r = runCheck(eccCheck, ecc(2), undefined);
    assert.equal(r.findings.length, 1);
    assert.equal(r.findings[0]?.severity, 'fatal');
    assert.equal(r.findings[0]?.reason, 'NvidiaDoubleBitError');
    assert.ok(namesTheGpu(r.findings[0]?.message ?? ''));
    assert.match(r.findings[0]?.message ?? '', /2 uncorrectable \(double-bit\) ECC errors/);
    assert.deepEqual(r.gauges, { ecc_volatile_uncorrected: 2, ecc_volatile_corrected: 5 });
  });

  it('control: none uncorrectable (corrected ones only) is no finding', () => {
    const r = runCheck(eccCheck, ecc(0), undefined);
    assert.deepEqual(r.findings, []);
    assert.equal(r.error, undefined);
  });

  it('ECC disabled is no finding and reads no counter; NOT_SUPPORTED (no ECC) is no error', () => {
    assert.deepEqual(runCheck(eccCheck, stubNvml({ eccEnabled: () => false }), undefined), { findings: [] });
    const none = stubNvml({ eccEnabled: () => nvmlError('eccEnabled', NVML.NOT_SUPPORTED) });
    assert.deepEqual(runCheck(eccCheck, none, undefined), { findings: [] });
  });

  it('another error is no verdict (the condition goes Unknown), not a finding', () => {
    const failing = stubNvml({
      eccEnabled: () => true,
      totalEccErrors: () => nvmlError('totalEccErrors', NVML.UNKNOWN),
    });
    const r = runCheck(eccCheck, failing, undefined);
    assert.deepEqual(r.findings, []);
    assert.equal(r.error?.code, NVML.UNKNOWN);
  });
});
