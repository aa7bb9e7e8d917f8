import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { NVML } from '../../../../src/host/nvml/api.ts';
import { hostPaths } from '../../../../src/host/paths.ts';
import type { Gpu } from '../../../../src/monitors/gpu/check.ts';
import { deviceCountCheck } from '../../../../src/monitors/gpu/checks/device-count.ts';
import { h200 } from '../../../support/nvml-memory.ts';
import { nvmlError, stubNvml } from './checks-stub.ts';
import { Harness, pciRoot } from './harness.ts';

const GPUS = ['0000:18:00.0', '0000:3b:00.0'];
/** An NVSwitch (NVIDIA, bridge class 0x0680) and an Intel VGA: neither is an NVIDIA GPU. */
const OTHERS: [string, string, string][] = [
  ['0000:05:00.0', '0x10de', '0x068000'],
  ['0000:00:02.0', '0x8086', '0x030000'],
];

const SEVEN = Array.from({ length: 7 }, (_, i) => `0000:${(0x18 + i).toString(16)}:00.0`);

function run(count: number, root: string, expectedCount?: number) {
  const nvml = stubNvml({ deviceCount: () => count });
  const options = expectedCount === undefined ? {} : { expectedCount };
  return deviceCountCheck.run({ nvml, options, now: 0, paths: hostPaths(root) }, undefined, null);
}

describe('device-count check', () => {
  it('fewer GPUs in NVML than NVIDIA GPUs on the PCI bus is fatal NvidiaDeviceCountMismatch', () => {
    const r = run(1, pciRoot(GPUS, OTHERS));
    assert.equal(r.findings[0]?.reason, 'NvidiaDeviceCountMismatch');
    assert.equal(r.findings[0]?.severity, 'fatal');
    assert.match(
      r.findings[0]?.message ?? '',
      /PCI bus shows 2 NVIDIA GPUs \(0000:18:00\.0, 0000:3b:00\.0\) and NVML sees 1/,
    );
  });

  it('control: as many as on the bus is no finding (NVSwitch and other vendors not counted)', () => {
    assert.deepEqual(run(2, pciRoot(GPUS, OTHERS)).findings, []);
  });

  it('the expected count: a difference is fatal, the same count is not', () => {
    assert.match(run(2, pciRoot(GPUS), 8).findings[0]?.message ?? '', /NVML sees 2 GPUs, 8 expected/);
    assert.deepEqual(run(8, pciRoot([]), 8).findings, []);
  });

  it("expectedCountFrom node: fewer in NVML than the Node's nvidia.com/gpu capacity is fatal", () => {
    const nvml = stubNvml({ deviceCount: () => 7 });
    const options = { expectedCountFrom: 'node' as const };
    // The bus shows 7 too: the GPU was lost before the kernel enumerated it, or /sys is not the host's.
    const ctx = { nvml, options, now: 0, paths: hostPaths(pciRoot(SEVEN)), nodeGpuCapacity: 8 };
    const r = deviceCountCheck.run(ctx, undefined, null);
    assert.equal(r.findings[0]?.reason, 'NvidiaDeviceCountMismatch');
    assert.equal(r.findings[0]?.severity, 'fatal');
    assert.match(r.findings[0]?.message ?? '', /nvidia\.com\/gpu capacity is 8 .* and NVML sees 7/);
  });

  it('control: capacity 8 and NVML 8 is no finding; capacity unknown or below NVML is not judged', () => {
    const at = (count: number, nodeGpuCapacity: number | undefined) => {
      const nvml = stubNvml({ deviceCount: () => count });
      const options = { expectedCountFrom: 'node' as const };
      return deviceCountCheck.run({ nvml, options, now: 0, nodeGpuCapacity }, undefined, null).findings;
    };
    assert.equal(at(7, 8).length, 1, 'the same path with a lost GPU fires');
    assert.deepEqual(at(8, 8), []);
    assert.deepEqual(at(7, undefined), []);
    assert.deepEqual(at(8, 7), [], 'a plugin limited to some GPUs is no GPU fault');
  });

  it('without expectedCountFrom the capacity is not compared', () => {
    const nvml = stubNvml({ deviceCount: () => 7 });
    const r = deviceCountCheck.run({ nvml, options: {}, now: 0, nodeGpuCapacity: 8 }, undefined, null);
    assert.deepEqual(r.findings, []);
  });

  it('no readable /sys/bus/pci skips the bus comparison; a count error is no verdict', () => {
    assert.deepEqual(run(1, '/nonexistent-root').findings, []);
    const nvml = stubNvml({ deviceCount: () => nvmlError('deviceCount', NVML.UNKNOWN) });
    const r = deviceCountCheck.run({ nvml, options: {}, now: 0 }, undefined, null);
    assert.equal(r.error?.code, NVML.UNKNOWN);
  });
});

describe('device-count names the GPUs on the PCI bus that NVML did not enumerate', () => {
  /** A GPU as NVML enumerates it: the bus id in NVML's format, "00000000:3B:00.0". */
  const enumerated = (index: number, busId: string): Gpu => ({
    index,
    handle: { index },
    uuid: `GPU-${index}`,
    name: 'NVIDIA H200',
    busId,
  });
  const named = (gpus: Gpu[], count = gpus.length) => {
    const nvml = stubNvml({ deviceCount: () => count });
    const paths = hostPaths(pciRoot(GPUS, OTHERS));
    return deviceCountCheck.run({ nvml, options: {}, now: 0, paths, gpus }, undefined, null).findings[0]
      ?.message;
  };

  it('the missing GPU by its bus id, NVML and sysfs formats compared as the kernel log writes them', () => {
    const message = named([enumerated(0, '00000000:18:00.0')]) ?? '';
    assert.match(message, /NVML sees 1; not enumerated by NVML: 0000:3b:00: a GPU fell off the bus/);
    assert.doesNotMatch(message, /not enumerated by NVML: [^:]*0000:18:00/);
    assert.match(named([enumerated(0, '00000000:3B:00.0')]) ?? '', /not enumerated by NVML: 0000:18:00:/);
  });

  it('control: every bus GPU enumerated is no finding; a count short of them names no GPU', () => {
    const both = [enumerated(0, '00000000:18:00.0'), enumerated(1, '00000000:3B:00.0')];
    assert.equal(named(both), undefined);
    // The count dropped before the lost GPU's own calls answered: both were enumerated, none is named.
    const short = named(both, 1) ?? '';
    assert.match(short, /NVML sees 1: a GPU fell off the bus/);
  });

  it('the monitor passes the GPUs it enumerated: the condition names the one NVML lacks', async () => {
    const root = pciRoot(['0000:00:00.0', '0000:01:00.0', '0000:3b:00.0']);
    const h = new Harness({ gpus: [h200(0), h200(1)], root });
    await h.start();
    assert.equal(h.condition()?.reason, 'NvidiaDeviceCountMismatch');
    assert.match(h.condition()?.message ?? '', /not enumerated by NVML: 0000:3b:00:/);
    await h.stop();
    const control = new Harness({
      gpus: [h200(0), h200(1)],
      root: pciRoot(['0000:00:00.0', '0000:01:00.0']),
    });
    await control.start();
    assert.equal(control.condition()?.status, 'False');
    await control.stop();
  });
});
