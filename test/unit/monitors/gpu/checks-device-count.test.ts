import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { NVML } from '../../../../src/host/nvml/api.ts';
import { hostPaths } from '../../../../src/host/paths.ts';
import { deviceCountCheck } from '../../../../src/monitors/gpu/checks/device-count.ts';
import { nvmlError, stubNvml } from './checks-stub.ts';
import { pciRoot } from './harness.ts';

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
