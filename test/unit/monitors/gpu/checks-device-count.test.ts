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

  it('no readable /sys/bus/pci skips the bus comparison; a count error is no verdict', () => {
    assert.deepEqual(run(1, '/nonexistent-root').findings, []);
    const nvml = stubNvml({ deviceCount: () => nvmlError('deviceCount', NVML.UNKNOWN) });
    const r = deviceCountCheck.run({ nvml, options: {}, now: 0 }, undefined, null);
    assert.equal(r.error?.code, NVML.UNKNOWN);
  });
});
