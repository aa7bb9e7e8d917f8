import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { type Nvml, NVML, type NvmlError } from '../../../../src/host/nvml/api.ts';
import {
  allowedReplays,
  PCIE_DEFAULTS,
  type PcieState,
  pcieCheck,
  pcieOptions,
} from '../../../../src/monitors/gpu/checks/pcie.ts';
import { namesTheGpu, nvmlError, runCheck, stubNvml } from './checks-stub.ts';

interface Scripted {
  width?: [number, number] | NvmlError;
  gen?: [number, number] | NvmlError;
  reasons?: number | NvmlError;
  replays?: number | NvmlError;
}

/** The H200 of gpu.md section 0: Gen5 x16 of Gen5 x16, idle, 2 replays. */
function nvml(s: Scripted = {}): Nvml {
  const pair = (v: [number, number] | NvmlError) => (Array.isArray(v) ? { current: v[0], max: v[1] } : v);
  return stubNvml({
    pcieWidth: () => pair(s.width ?? [16, 16]),
    pcieGeneration: () => pair(s.gen ?? [5, 5]),
    clocksEventReasons: () => s.reasons ?? 0x1,
    pcieReplayCounter: () => s.replays ?? 2,
  });
}

/** Polls with the given answers at the given times (ms), one state, returns every result. */
function polls(steps: { at: number; s: Scripted }[], options = PCIE_DEFAULTS) {
  const state: PcieState = pcieCheck.initialState();
  return steps.map((step) => runCheck(pcieCheck, nvml(step.s), options, state, step.at));
}

describe('GPU check pcie: link below its maximum under load', () => {
  it('x8 of x16 while busy: a warning on the second loaded poll, naming the GPU and the link', () => {
    const busy = { width: [8, 16] as [number, number], reasons: 0 };
    const [first, second] = polls([
      { at: 0, s: busy },
      { at: 60_000, s: busy },
    ]);
    assert.deepEqual(first?.findings, []);
    assert.deepEqual(
      second?.findings.map((f) => [f.severity, f.reason]),
      [['warning', 'NvidiaPCIeLinkDegraded']],
    );
    const message = second?.findings[0]?.message ?? '';
    assert.ok(namesTheGpu(message) && message.includes('Gen5 x8') && message.includes('Gen5 x16'), message);
  });

  it('Gen4 of Gen5 while busy (HW slowdown set, not idle) is a warning too', () => {
    const busy = { gen: [4, 5] as [number, number], reasons: 0x8 };
    const r = polls([
      { at: 0, s: busy },
      { at: 60_000, s: busy },
    ]);
    assert.equal(r[1]?.findings.length, 1);
  });

  it('the same down-trained link while idle, or with idleness unknown, is no finding', () => {
    const unknown = nvmlError('nvmlDeviceGetCurrentClocksEventReasons', NVML.NOT_SUPPORTED);
    for (const reasons of [0x1, 0x5, unknown]) {
      const s = { width: [8, 16] as [number, number], gen: [1, 5] as [number, number], reasons };
      const r = polls([0, 60_000, 120_000].map((at) => ({ at, s })));
      assert.ok(
        r.every((x) => x.findings.length === 0 && x.error === undefined),
        String(reasons),
      );
    }
  });

  it('an idle poll between two loaded ones starts the count over', () => {
    const busy = { width: [8, 16] as [number, number], reasons: 0 };
    const idle = { width: [8, 16] as [number, number], reasons: 0x1 };
    const r = polls([
      { at: 0, s: busy },
      { at: 60_000, s: idle },
      { at: 120_000, s: busy },
      { at: 180_000, s: busy },
    ]);
    assert.deepEqual(
      r.map((x) => x.findings.length),
      [0, 0, 0, 1],
    );
  });

  it('a full-speed link under load is no finding; linkDegraded: false silences a slow one', () => {
    const full = polls([0, 60_000, 120_000].map((at) => ({ at, s: { reasons: 0 } })));
    assert.ok(full.every((x) => x.findings.length === 0));
    const slow = { width: [8, 16] as [number, number], reasons: 0 };
    const off = polls(
      [0, 60_000].map((at) => ({ at, s: slow })),
      pcieOptions.parse({ linkDegraded: false }),
    );
    assert.ok(off.every((x) => x.findings.length === 0));
  });
});

describe('GPU check pcie: replay rate against DCGM per-generation limits', () => {
  it("DCGM's limit: ceil(per-lane rate x lanes), capped at the last generation it knows", () => {
    const link = (gen: number, width: number) => ({
      gen: { current: gen, max: gen },
      width: { current: width, max: width },
    });
    const perLane = PCIE_DEFAULTS.replaysPerLanePerMinute;
    assert.equal(allowedReplays(link(5, 16), perLane), 31); // 1.92 x 16 = 30.72
    assert.equal(allowedReplays(link(4, 16), perLane), 16); // 0.96 x 16 = 15.36
    assert.equal(allowedReplays(link(3, 16), perLane), 8); // 0.48 x 16 = 7.68
    assert.equal(allowedReplays(link(2, 8), perLane), 3); // 0.3 x 8 = 2.4
    assert.equal(allowedReplays(link(1, 1), perLane), 1); // 0.15
    assert.equal(allowedReplays(link(7, 16), perLane), 62); // capped at Gen6: 3.84 x 16 = 61.44
  });

  it('40 replays in a minute at Gen5 x16 is a warning; 31 (the limit) is not', () => {
    const over = polls([
      { at: 0, s: { replays: 2 } },
      { at: 60_000, s: { replays: 42 } },
    ]);
    assert.deepEqual(over[0]?.findings, [], 'the first poll only sets the baseline');
    assert.equal(over[1]?.findings[0]?.reason, 'NvidiaPCIeError');
    const message = over[1]?.findings[0]?.message ?? '';
    assert.ok(
      namesTheGpu(message) && message.includes('40 PCIe replays') && message.includes('31 per minute'),
    );
    assert.equal(over[1]?.gauges?.pcie_replays_per_minute, 40);
    const within = polls([
      { at: 0, s: { replays: 2 } },
      { at: 60_000, s: { replays: 33 } },
    ]);
    assert.deepEqual(within[1]?.findings, []);
    assert.equal(within[1]?.gauges?.pcie_replays_per_minute, 31);
  });

  it('a short poll counts as one minute; a long one is averaged over its length', () => {
    const short = polls([
      { at: 0, s: { replays: 0 } },
      { at: 10_000, s: { replays: 30 } },
    ]);
    assert.deepEqual(short[1]?.findings, []);
    const long = polls([
      { at: 0, s: { replays: 0 } },
      { at: 300_000, s: { replays: 150 } },
    ]);
    assert.deepEqual(long[1]?.findings, [], '30 per minute over five minutes');
    const burst = polls([
      { at: 0, s: { replays: 0 } },
      { at: 10_000, s: { replays: 32 } },
    ]);
    assert.equal(burst[1]?.findings.length, 1, 'control: 32 in ten seconds is over');
  });

  it('a counter that went down (driver reload) sets a new baseline, no finding', () => {
    const r = polls([
      { at: 0, s: { replays: 500 } },
      { at: 60_000, s: { replays: 3 } },
      { at: 120_000, s: { replays: 100 } },
    ]);
    assert.deepEqual(
      r.map((x) => x.findings.length),
      [0, 0, 1],
    );
  });

  it('the H200 at rest (Gen5 x16, idle, 2 replays) gives no finding and its gauges', () => {
    const r = polls([
      { at: 0, s: {} },
      { at: 60_000, s: {} },
    ]);
    assert.deepEqual(r[1], {
      findings: [],
      gauges: {
        pcie_link_width: 16,
        pcie_link_width_max: 16,
        pcie_link_gen: 5,
        pcie_link_gen_max: 5,
        pcie_replay_counter: 2,
        pcie_replays_per_minute: 0,
      },
    });
  });
});

describe('GPU check pcie: NVML answers', () => {
  it('NOT_SUPPORTED leaves that part out without an error', () => {
    const none = nvmlError('nvmlDeviceGetPcieReplayCounter', NVML.NOT_SUPPORTED);
    const r = polls([
      { at: 0, s: { replays: none, width: [8, 16], reasons: 0 } },
      { at: 60_000, s: { replays: none, width: [8, 16], reasons: 0 } },
    ]);
    assert.equal(r[1]?.error, undefined);
    assert.equal(r[1]?.findings.length, 1, 'control: the link part still judges');
    assert.equal(r[1]?.gauges?.pcie_replay_counter, undefined);
  });

  it("the clock event reasons' FUNCTION_NOT_FOUND (an older driver) leaves idleness unknown; elsewhere it is the error", () => {
    const missing = nvmlError('nvmlDeviceGetCurrentClocksEventReasons', NVML.FUNCTION_NOT_FOUND);
    const slow = { width: [8, 16] as [number, number], reasons: missing };
    const r = polls([0, 60_000, 120_000].map((at) => ({ at, s: slow })));
    assert.ok(r.every((x) => x.error === undefined && x.findings.length === 0));
    const widthMissing = nvmlError('nvmlDeviceGetCurrPcieLinkWidth', NVML.FUNCTION_NOT_FOUND);
    assert.equal(runCheck(pcieCheck, nvml({ width: widthMissing }), PCIE_DEFAULTS).error, widthMissing);
  });

  it('GPU_IS_LOST or an unknown error from any call is the error', () => {
    for (const code of [NVML.GPU_IS_LOST, NVML.UNKNOWN]) {
      const err = nvmlError('nvmlDeviceGetCurrPcieLinkWidth', code);
      const r = runCheck(pcieCheck, nvml({ width: err }), PCIE_DEFAULTS);
      assert.equal(r.error, err);
    }
  });

  it('options: defaults are DCGM table and two polls; a bad value is refused', () => {
    assert.deepEqual(PCIE_DEFAULTS.replaysPerLanePerMinute, [0.15, 0.3, 0.48, 0.96, 1.92, 3.84]);
    assert.equal(PCIE_DEFAULTS.degradedPolls, 2);
    assert.equal(pcieOptions.safeParse({ degradedPolls: 0 }).success, false);
    assert.equal(pcieOptions.safeParse({ replaysPerLanePerMinute: [] }).success, false);
    assert.equal(pcieOptions.safeParse({ degradedPolls: 3 }).success, true);
  });
});
