import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { kernelBusId } from '../../../../src/monitors/gpu/identity.ts';

describe('kernelBusId', () => {
  it("writes NVML's bus id as the kernel log names the GPU (kernel_rc.c: PCI:%04x:%02x:%02x)", () => {
    // The H200 of gpu.md section 0: nvml.json's busId, and "NVRM: Xid (PCI:0000:00:06): 31, ..." in its kmsg.
    assert.equal(kernelBusId('00000000:00:06.0'), '0000:00:06');
    assert.equal(kernelBusId('00000000:3B:00.0'), '0000:3b:00');
  });

  it('keeps a domain above 0xffff whole, as %04x prints it', () => {
    assert.equal(kernelBusId('00010000:01:00.0'), '10000:01:00');
  });

  it('control: something that is no bus id is only lower-cased, never made to look like one', () => {
    assert.equal(kernelBusId('unknown'), 'unknown');
    assert.equal(kernelBusId('GPU-ABC'), 'gpu-abc');
  });
});
