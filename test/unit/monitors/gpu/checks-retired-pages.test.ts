import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { NVML } from '../../../../src/host/nvml/api.ts';
import { retiredPagesCheck, retiredPagesOptions } from '../../../../src/monitors/gpu/checks/retired-pages.ts';
import { namesTheGpu, nvmlError, runCheck, stubNvml } from './checks-stub.ts';

const DEFAULTS = retiredPagesOptions.parse({});

function pages(sbe: number, dbe: number, pending: boolean) {
  return stubNvml({
    retiredPages: (_d, cause) => (cause === 0 ? sbe : dbe),
    retiredPagesPending: () => pending,
  });
}

describe('retired-pages check', () => {
  it('defaults to DCGM limit of 63 retired pages', () => {
    assert.equal(DEFAULTS.limit, 63);
  });

  it('SBE + DBE retired pages at 63 is fatal; 62 is nothing (control)', () => {
    const r = runCheck(retiredPagesCheck, pages(60, 3, false), DEFAULTS);
    assert.deepEqual(
      r.findings.map((f) => [f.severity, f.reason]),
      [['fatal', 'NvidiaPageRetirementLimit']],
    );
    assert.ok(namesTheGpu(r.findings[0]?.message ?? ''));
    assert.deepEqual(runCheck(retiredPagesCheck, pages(60, 2, false), DEFAULTS).findings, []);
  });

  it('a pending retirement is a warning (EKS NvidiaPageRetirement)', () => {
    const r = runCheck(retiredPagesCheck, pages(1, 0, true), DEFAULTS);
    assert.deepEqual(
      r.findings.map((f) => [f.severity, f.reason]),
      [['warning', 'NvidiaPageRetirement']],
    );
    assert.deepEqual(r.gauges, { retired_pages_sbe: 1, retired_pages_dbe: 0, retired_pages_pending: 1 });
  });

  it('NOT_SUPPORTED on Hopper (the H200 of gpu.md section 0) is no finding and no error', () => {
    const hopper = stubNvml({ retiredPages: () => nvmlError('retiredPages', NVML.NOT_SUPPORTED) });
    assert.deepEqual(runCheck(retiredPagesCheck, hopper, DEFAULTS), { findings: [] });
  });

  it('another error is no verdict', () => {
    const bad = stubNvml({ retiredPages: () => nvmlError('retiredPages', NVML.UNKNOWN) });
    assert.equal(runCheck(retiredPagesCheck, bad, DEFAULTS).error?.code, NVML.UNKNOWN);
  });
});
