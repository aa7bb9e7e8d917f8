import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { NVML } from '../../../../src/host/nvml/api.ts';
import {
  THROTTLE_DEFAULTS,
  throttleCheck,
  throttleOptions,
} from '../../../../src/monitors/gpu/checks/throttle.ts';
import { namesTheGpu, nvmlError, runCheck, stubNvml } from './checks-stub.ts';

function run(reasons: number, options = THROTTLE_DEFAULTS) {
  return runCheck(throttleCheck, stubNvml({ clocksEventReasons: () => reasons }), options);
}

describe('GPU check throttle (clocks event reasons)', () => {
  it('HW thermal slowdown (0x40, with the HW slowdown bit nvidia-smi nests it under) gives two warnings', () => {
    const r = run(0x48);
    assert.deepEqual(
      r.findings.map((f) => [f.severity, f.reason]),
      [
        ['warning', 'NvidiaHWSlowdown'],
        ['warning', 'NvidiaThermalError'],
      ],
    );
    assert.ok(r.findings.every((f) => namesTheGpu(f.message) && f.message.includes('0x48')));
    assert.deepEqual(r.gauges, {
      clocks_event_hw_slowdown: 1,
      clocks_event_hw_thermal_slowdown: 1,
      clocks_event_hw_power_brake: 0,
    });
  });

  it('HW power brake (0x80) is a power warning', () => {
    const r = run(0x80);
    assert.deepEqual(
      r.findings.map((f) => [f.severity, f.reason]),
      [['warning', 'NvidiaPowerError']],
    );
  });

  it("never judges idle (the H200's 0x1 at rest), application clocks, SW power cap, sync boost, SW thermal, display clock", () => {
    for (const benign of [0x1, 0x2, 0x4, 0x10, 0x20, 0x100, 0x1 | 0x4 | 0x20]) {
      const r = run(benign);
      assert.deepEqual(r.findings, [], `0x${benign.toString(16)}`);
      assert.equal(r.error, undefined);
      assert.deepEqual(Object.values(r.gauges ?? {}), [0, 0, 0]);
    }
    // Control: the same benign bits beside a HW bit still report the HW bit.
    assert.equal(run(0x1 | 0x4 | 0x80).findings.length, 1);
  });

  it('a bit switched off by its option still shows on its gauge', () => {
    const off = run(0x8, throttleOptions.parse({ hwSlowdown: false }));
    assert.deepEqual(off.findings, []);
    assert.equal(off.gauges?.clocks_event_hw_slowdown, 1);
    assert.equal(run(0x8).findings.length, 1, 'control: on by default');
  });

  it('a driver without the call: no finding, no error, the skip on a gauge', () => {
    const err = nvmlError('nvmlDeviceGetCurrentClocksEventReasons', NVML.FUNCTION_NOT_FOUND);
    const r = runCheck(throttleCheck, stubNvml({ clocksEventReasons: () => err }), THROTTLE_DEFAULTS);
    assert.deepEqual(r, { findings: [], gauges: { clocks_event_reasons_query_missing: 1 } });
  });

  it('NOT_SUPPORTED is no finding and no error; GPU_IS_LOST and other errors are the error', () => {
    const unsupported = runCheck(
      throttleCheck,
      stubNvml({
        clocksEventReasons: () => nvmlError('nvmlDeviceGetCurrentClocksEventReasons', NVML.NOT_SUPPORTED),
      }),
      THROTTLE_DEFAULTS,
    );
    assert.deepEqual(unsupported, { findings: [] });
    for (const code of [NVML.GPU_IS_LOST, NVML.UNKNOWN]) {
      const err = nvmlError('nvmlDeviceGetCurrentClocksEventReasons', code);
      const r = runCheck(throttleCheck, stubNvml({ clocksEventReasons: () => err }), THROTTLE_DEFAULTS);
      assert.equal(r.error, err);
      assert.deepEqual(r.findings, []);
    }
  });

  it('options: every bit on by default; an unknown key is refused', () => {
    assert.deepEqual(THROTTLE_DEFAULTS, { hwSlowdown: true, hwThermalSlowdown: true, hwPowerBrake: true });
    assert.equal(throttleOptions.safeParse({ swPowerCap: true }).success, false);
    assert.equal(throttleOptions.safeParse({ hwPowerBrake: false }).success, true);
  });
});
