import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { type Answer, NVML } from '../../../../src/host/nvml/api.ts';
import { inforomCheck } from '../../../../src/monitors/gpu/checks/inforom.ts';
import { namesTheGpu, nvmlError, runCheck, stubNvml } from './checks-stub.ts';

function poll(answer: Answer<void>) {
  return runCheck(inforomCheck, stubNvml({ validateInforom: () => answer }), {});
}

describe('GPU check inforom', () => {
  it('CORRUPTED_INFOROM is one warning naming the GPU; a valid InfoROM is none', () => {
    const bad = poll(nvmlError('nvmlDeviceValidateInforom', NVML.CORRUPTED_INFOROM));
    assert.deepEqual(
      bad.findings.map((f) => [f.severity, f.reason]),
      [['warning', 'NvidiaInfoROMCorrupted']],
    );
    assert.ok(namesTheGpu(bad.findings[0]?.message ?? ''));
    assert.equal(bad.error, undefined, 'a corrupted InfoROM is the finding, not an NVML failure');
    assert.deepEqual(bad.gauges, { inforom_valid: 0 });
    assert.deepEqual(poll(undefined), { findings: [], gauges: { inforom_valid: 1 } });
  });

  it('NOT_SUPPORTED is no finding and no error', () => {
    assert.deepEqual(poll(nvmlError('nvmlDeviceValidateInforom', NVML.NOT_SUPPORTED)), { findings: [] });
  });

  it('GPU_IS_LOST and an unknown error are the error', () => {
    for (const code of [NVML.GPU_IS_LOST, NVML.UNKNOWN]) {
      const err = nvmlError('nvmlDeviceValidateInforom', code);
      const r = poll(err);
      assert.equal(r.error, err);
      assert.deepEqual(r.findings, []);
    }
  });
});
