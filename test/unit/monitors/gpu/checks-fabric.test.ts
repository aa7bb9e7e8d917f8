import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { type Answer, type FabricInfo, NVML } from '../../../../src/host/nvml/api.ts';
import {
  decodeHealthMask,
  FABRIC_DEFAULTS,
  type FabricState,
  fabricCheck,
  fabricOptions,
} from '../../../../src/monitors/gpu/checks/fabric.ts';
import { namesTheGpu, nvmlError, runCheck, stubNvml } from './checks-stub.ts';

const COMPLETED = 3;
/** Every two-bit field FALSE (2) and INCORRECT_CONFIGURATION NONE (1): a healthy, fully reported mask. */
const ALL_FALSE = 0x2 | (0x2 << 2) | (0x2 << 4) | (0x2 << 6) | (0x1 << 8);

function info(over: Partial<FabricInfo> = {}): FabricInfo {
  return { state: COMPLETED, status: NVML.SUCCESS, healthMask: ALL_FALSE, healthSummary: 1, ...over };
}

function poll(answer: Answer<FabricInfo>, state: FabricState = {}, now = 0, options = FABRIC_DEFAULTS) {
  return runCheck(fabricCheck, stubNvml({ fabricInfo: () => answer }), options, state, now);
}

const judged = (r: ReturnType<typeof poll>) => r.findings.map((f) => [f.severity, f.reason]);

describe('GPU check fabric: no fabric', () => {
  it('state NOT_SUPPORTED and NOT_SUPPORTED are no finding and no error', () => {
    assert.deepEqual(poll(info({ state: 0 })), { findings: [] });
    assert.deepEqual(poll(nvmlError('nvmlDeviceGetGpuFabricInfoV', NVML.NOT_SUPPORTED)), { findings: [] });
  });

  it('a driver without the call or the v3 struct: no finding, no error, the skip on a gauge', () => {
    for (const code of [NVML.FUNCTION_NOT_FOUND, 25]) {
      const r = poll(nvmlError('nvmlDeviceGetGpuFabricInfoV', code));
      assert.deepEqual(r, { findings: [], gauges: { fabric_query_missing: 1 } }, String(code));
    }
  });

  it('GPU_IS_LOST and an unknown error are the error', () => {
    for (const code of [NVML.GPU_IS_LOST, NVML.UNKNOWN]) {
      const err = nvmlError('nvmlDeviceGetGpuFabricInfoV', code);
      assert.equal(poll(err).error, err);
    }
  });
});

describe('GPU check fabric: registration', () => {
  it('COMPLETED with status SUCCESS and a healthy summary is no finding', () => {
    assert.deepEqual(poll(info()), { findings: [], gauges: { fabric_state: 3, fabric_health_summary: 1 } });
  });

  it('COMPLETED with a failed status is fatal NvidiaFabricError naming the GPU and the status', () => {
    const r = poll(info({ status: NVML.UNKNOWN }));
    assert.deepEqual(judged(r), [['fatal', 'NvidiaFabricError']]);
    assert.ok(namesTheGpu(r.findings[0]?.message ?? '') && r.findings[0]?.message.includes('status 999'));
  });

  it('NOT_STARTED past the grace period is fatal; within it, or IN_PROGRESS then COMPLETED, is not', () => {
    const state: FabricState = {};
    const grace = FABRIC_DEFAULTS.notCompletedGraceMs;
    assert.deepEqual(poll(info({ state: 1 }), state, 1_000).findings, []);
    assert.deepEqual(poll(info({ state: 1 }), state, grace).findings, [], 'a second short of the grace');
    const late = poll(info({ state: 1 }), state, grace + 1_000);
    assert.deepEqual(judged(late), [['fatal', 'NvidiaFabricError']]);
    assert.ok(late.findings[0]?.message.includes('not started for 300 s'));
    assert.ok(late.findings[0]?.message.includes('Fabric Manager'));
    assert.deepEqual(poll(info(), state, grace + 2_000).findings, [], 'completed clears it');
    assert.deepEqual(poll(info({ state: 2 }), state, grace + 3_000).findings, [], 'the grace starts over');
  });
});

describe('GPU check fabric: health', () => {
  it('summary unhealthy is fatal; limited capacity is a warning', () => {
    assert.deepEqual(judged(poll(info({ healthSummary: 2 }))), [['fatal', 'NvidiaFabricError']]);
    assert.deepEqual(judged(poll(info({ healthSummary: 3 }))), [['warning', 'NvidiaFabricLimitedCapacity']]);
  });

  it('mask 0x80 (access timeout recovery FALSE) and an all-FALSE mask are healthy: a non-zero mask is no fault', () => {
    assert.deepEqual(poll(info({ healthMask: 0x80 })).findings, []);
    assert.deepEqual(poll(info({ healthMask: ALL_FALSE })).findings, []);
    assert.deepEqual(decodeHealthMask(0x80), { faults: [], all: [] });
  });

  it('bandwidth degraded TRUE and route unhealthy TRUE are warnings naming the mask', () => {
    const degraded = poll(info({ healthMask: (ALL_FALSE & ~0x3) | 0x1 }));
    assert.deepEqual(judged(degraded), [['warning', 'NvidiaFabricBandwidthDegraded']]);
    assert.ok(degraded.findings[0]?.message.includes('bandwidth degraded'));
    const route = poll(info({ healthMask: (ALL_FALSE & ~(0x3 << 4)) | (0x1 << 4) }));
    assert.deepEqual(judged(route), [['warning', 'NvidiaFabricRouteUnhealthy']]);
    assert.ok(route.findings[0]?.message.includes('route unhealthy (health mask 0x1'));
    const both = poll(info({ healthMask: 0x1 | (0x1 << 4) }));
    assert.deepEqual(
      judged(both).map(([, reason]) => reason),
      ['NvidiaFabricBandwidthDegraded', 'NvidiaFabricRouteUnhealthy'],
      'two faults, two reasons: each gets its own event',
    );
  });

  it('recovery in progress is named in the summary message but is no finding of its own', () => {
    const recovering = (ALL_FALSE & ~(0x3 << 2)) | (0x1 << 2);
    assert.deepEqual(poll(info({ healthMask: recovering })).findings, []);
    const limited = poll(info({ healthMask: recovering, healthSummary: 3 }));
    assert.ok(limited.findings[0]?.message.includes('route recovery in progress'));
  });

  it('incorrect configuration: 1 (none) is healthy, 2 and above a warning', () => {
    assert.deepEqual(poll(info({ healthMask: 0x1 << 8 })).findings, []);
    const wrong = poll(info({ healthMask: (ALL_FALSE & ~(0xf << 8)) | (0x4 << 8) }));
    assert.deepEqual(judged(wrong), [['warning', 'NvidiaFabricMisconfigured']]);
    assert.ok(wrong.findings[0]?.message.includes('incorrect configuration (code 4)'));
  });

  it('options: five minutes by default; a negative grace is refused', () => {
    assert.equal(FABRIC_DEFAULTS.notCompletedGraceMs, 300_000);
    assert.equal(fabricOptions.safeParse({ notCompletedGraceMs: -1 }).success, false);
  });
});
