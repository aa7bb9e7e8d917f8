import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { type Answer, NVML, type Nvml, NvmlError } from '../../../src/host/nvml/api.ts';
import { nvmlLoader } from '../../../src/host/nvml/binding.ts';
import { type FakeNvmlHarness, fakeNvmlHarness } from '../../support/fake-nvml/harness.ts';

/** The binding against the fake NVML (test/support/fake-nvml/), loaded the production way. */
let fake: FakeNvmlHarness;
let nvml: Nvml;

function ok<T>(answer: Answer<T>): T {
  if (answer instanceof NvmlError) assert.fail(`unexpected ${answer.message}`);
  return answer;
}

function fails(answer: Answer<unknown>, call: string, code: number, text: string): void {
  assert.ok(answer instanceof NvmlError, `${call} answered ${JSON.stringify(answer)}`);
  assert.equal(answer.call, call);
  assert.equal(answer.code, code);
  assert.equal(answer.message, `${call}: ${text} (${code})`);
}

before(() => {
  fake = fakeNvmlHarness();
  const loaded = nvmlLoader(fake.library)();
  assert.ok(!(loaded instanceof Error), String(loaded));
  nvml = loaded;
});
after(() => fake.close());

describe('NVML binding: the default fake is the measured H200', () => {
  it('answers every identity and health call as nvml.json', () => {
    fake.defaults();
    ok(nvml.init());
    assert.equal(ok(nvml.driverVersion()), '580.159.04');
    assert.equal(ok(nvml.deviceCount()), 1);
    const gpu = ok(nvml.handle(0));
    assert.equal(gpu.index, 0);
    assert.equal(ok(nvml.uuid(gpu)), 'GPU-9571ff8c-5bff-8cfd-14bc-40686eeaa1f3');
    assert.equal(ok(nvml.name(gpu)), 'NVIDIA H200');
    assert.deepEqual(ok(nvml.pciInfo(gpu)), { busId: '00000000:00:06.0', pciDeviceId: 590680286 });
    assert.equal(ok(nvml.eccEnabled(gpu)), true);
    for (const [e, c] of [
      [0, 0],
      [0, 1],
      [1, 0],
      [1, 1],
    ] as const)
      assert.equal(ok(nvml.totalEccErrors(gpu, e, c)), 0);
    assert.deepEqual(ok(nvml.remappedRows(gpu)), {
      correctable: 0,
      uncorrectable: 0,
      pending: false,
      failure: false,
    });
    fails(nvml.retiredPages(gpu, 0), 'nvmlDeviceGetRetiredPages', NVML.NOT_SUPPORTED, 'Not Supported');
    fails(nvml.retiredPagesPending(gpu), 'nvmlDeviceGetRetiredPagesPendingStatus', 3, 'Not Supported');
    assert.equal(ok(nvml.clocksEventReasons(gpu)), 0x1);
    assert.deepEqual(ok(nvml.pcieWidth(gpu)), { current: 16, max: 16 });
    assert.deepEqual(ok(nvml.pcieGeneration(gpu)), { current: 5, max: 5 });
    assert.equal(ok(nvml.pcieReplayCounter(gpu)), 2);
    fails(nvml.nvLinkActive(gpu, 0), 'nvmlDeviceGetNvLinkState', 3, 'Not Supported');
    fails(nvml.fabricInfo(gpu), 'nvmlDeviceGetGpuFabricInfoV', 3, 'Not Supported');
    assert.equal(nvml.validateInforom(gpu), undefined);
    assert.equal(ok(nvml.supportedEventTypes(gpu)), 0xff9f);
    assert.deepEqual(ok(nvml.fieldValues(gpu, [{ fieldId: 230 }])), [
      { fieldId: 230, scopeId: 0, ret: 0, value: 0 },
    ]);
    ok(nvml.shutdown());
  });
});

describe('NVML binding: values round-trip through every struct field', () => {
  it('reads each scripted value of the second GPU, the first keeping its defaults', () => {
    fake.state({
      gpus: [
        undefined,
        {
          uuid: 'GPU-1f2e3d4c-0000-1111-2222-333344445555',
          name: 'NVIDIA H100 80GB HBM3',
          busId: '00000002:3B:1F.0',
          pciDeviceId: 0x233010de,
          pciSubSystemId: 0x16c110de,
          eccMode: [0, 1],
          ecc: {
            correctedVolatile: 11,
            correctedAggregate: 2 ** 40 + 12,
            uncorrectedVolatile: 13,
            uncorrectedAggregate: 14,
          },
          remap: { correctable: 5, uncorrectable: 6, pending: false, failure: true },
          retiredSbe: 7,
          retiredDbe: 0,
          retiredPending: true,
          clocks: 0x48,
          pcieWidth: [8, 16],
          pcieGen: [3, 5],
          pcieReplay: 123456,
          nvlinks: 4,
          nvlink: { 2: false },
          fabric: { state: 3, status: 15, healthMask: 0x155, healthSummary: 2 },
          events: 0x4008,
        },
      ],
    });
    ok(nvml.init());
    assert.equal(ok(nvml.deviceCount()), 2);
    const [first, gpu] = [ok(nvml.handle(0)), ok(nvml.handle(1))];
    assert.equal(gpu.index, 1);
    assert.equal(ok(nvml.uuid(gpu)), 'GPU-1f2e3d4c-0000-1111-2222-333344445555');
    assert.equal(ok(nvml.name(gpu)), 'NVIDIA H100 80GB HBM3', 'a name with spaces, whole');
    // pciSubSystemId (offset 32) sits between pciDeviceId (28) and busId (36): a shifted read shows.
    assert.deepEqual(ok(nvml.pciInfo(gpu)), { busId: '00000002:3B:1F.0', pciDeviceId: 0x233010de });
    assert.equal(ok(nvml.pciInfo(first)).busId, '00000000:00:06.0');
    assert.equal(ok(nvml.eccEnabled(gpu)), false, 'the current mode, not the pending one');
    assert.equal(ok(nvml.totalEccErrors(gpu, 0, 0)), 11);
    assert.equal(ok(nvml.totalEccErrors(gpu, 0, 1)), 2 ** 40 + 12, 'all 64 bits');
    assert.equal(ok(nvml.totalEccErrors(gpu, 1, 0)), 13);
    assert.equal(ok(nvml.totalEccErrors(gpu, 1, 1)), 14);
    assert.equal(ok(nvml.totalEccErrors(first, 1, 0)), 0);
    assert.deepEqual(ok(nvml.remappedRows(gpu)), {
      correctable: 5,
      uncorrectable: 6,
      pending: false,
      failure: true,
    });
    assert.equal(ok(nvml.retiredPages(gpu, 0)), 7, 'the count NVML gives with INSUFFICIENT_SIZE');
    assert.equal(ok(nvml.retiredPages(gpu, 1)), 0, 'no pages: SUCCESS');
    assert.equal(ok(nvml.retiredPagesPending(gpu)), true);
    assert.equal(ok(nvml.clocksEventReasons(gpu)), 0x48);
    assert.deepEqual(ok(nvml.pcieWidth(gpu)), { current: 8, max: 16 });
    assert.deepEqual(ok(nvml.pcieGeneration(gpu)), { current: 3, max: 5 });
    assert.equal(ok(nvml.pcieReplayCounter(gpu)), 123456);
    assert.deepEqual(
      [0, 1, 2, 3].map((l) => ok(nvml.nvLinkActive(gpu, l))),
      [true, true, false, true],
    );
    fails(nvml.nvLinkActive(gpu, 4), 'nvmlDeviceGetNvLinkState', 3, 'Not Supported');
    assert.deepEqual(ok(nvml.fabricInfo(gpu)), { state: 3, status: 15, healthMask: 0x155, healthSummary: 2 });
    assert.equal(ok(nvml.supportedEventTypes(gpu)), 0x4008);
    ok(nvml.shutdown());
  });

  it('reads field values by their value type, with each field its own return', () => {
    fake.state({
      gpus: [
        {
          fields: {
            230: { value: 2, type: 1 },
            '38.3': 17,
            75: { value: 1.5, type: 0 },
            76: { value: -5, type: 4 },
            77: { value: -6, type: 5 },
            78: { value: 65535, type: 6 },
            79: { value: 2 ** 33, type: 2 },
          },
        },
      ],
    });
    ok(nvml.init());
    const gpu = ok(nvml.handle(0));
    const fields = [230, 38, 75, 76, 77, 78, 79].map((fieldId) => ({
      fieldId,
      scopeId: fieldId === 38 ? 3 : 0,
    }));
    const values = ok(nvml.fieldValues(gpu, [...fields, { fieldId: 38, scopeId: 1 }, { fieldId: 9999 }]));
    assert.deepEqual(
      values.map((v) => [v.fieldId, v.scopeId, v.ret, v.value]),
      [
        [230, 0, 0, 2],
        [38, 3, 0, 17],
        [75, 0, 0, 1.5],
        [76, 0, 0, -5],
        [77, 0, 0, -6],
        [78, 0, 0, 65535],
        [79, 0, 0, 2 ** 33],
        [38, 1, NVML.NOT_SUPPORTED, 0],
        [9999, 0, NVML.NOT_SUPPORTED, 0],
      ],
    );
    assert.deepEqual(ok(nvml.fieldValues(gpu, [])), [], 'no call for no fields');
    ok(nvml.shutdown());
  });
});

describe('NVML binding: failing calls carry NVML code and text', () => {
  it('a lost GPU answers GPU_IS_LOST on every call; the other GPU still answers', () => {
    fake.state({ gpus: [{}, { lost: true }] });
    ok(nvml.init());
    const gpu0 = ok(nvml.handle(0));
    fails(nvml.handle(1), 'nvmlDeviceGetHandleByIndex_v2', NVML.GPU_IS_LOST, 'GPU is lost');
    assert.equal(ok(nvml.uuid(gpu0)), 'GPU-9571ff8c-5bff-8cfd-14bc-40686eeaa1f3');
    fake.state({ gpus: [{}, {}] });
    const gpu1 = ok(nvml.handle(1));
    fake.state({ gpus: [{}, { lost: true }] });
    fails(nvml.remappedRows(gpu1), 'nvmlDeviceGetRemappedRows', 15, 'GPU is lost');
    fails(nvml.totalEccErrors(gpu1, 1, 0), 'nvmlDeviceGetTotalEccErrors', 15, 'GPU is lost');
    assert.equal(ok(nvml.pcieReplayCounter(gpu0)), 2);
    ok(nvml.shutdown());
  });

  it('a call scripted NOT_SUPPORTED fails alone; an invalid InfoROM answers CORRUPTED_INFOROM', () => {
    fake.state({ gpus: [{ ret: { nvmlDeviceGetRemappedRows: 3 }, inforomValid: false }] });
    ok(nvml.init());
    const gpu = ok(nvml.handle(0));
    fails(nvml.remappedRows(gpu), 'nvmlDeviceGetRemappedRows', 3, 'Not Supported');
    assert.equal(ok(nvml.clocksEventReasons(gpu)), 1);
    fails(
      nvml.validateInforom(gpu),
      'nvmlDeviceValidateInforom',
      NVML.CORRUPTED_INFOROM,
      'Corrupted infoROM',
    );
    fake.state({ gpus: [{ pcieWidth: [4, 16], ret: { nvmlDeviceGetMaxPcieLinkWidth: 999 } }] });
    fails(nvml.pcieWidth(gpu), 'nvmlDeviceGetMaxPcieLinkWidth', 999, 'Unknown Error');
    ok(nvml.shutdown());
  });

  it('Unknown Error from nvmlInit_v2 (a container after daemon-reload); calls before init are refused', () => {
    fake.state({ init: 999 });
    fails(nvml.init(), 'nvmlInit_v2', NVML.UNKNOWN, 'Unknown Error');
    fails(nvml.deviceCount(), 'nvmlDeviceGetCount_v2', NVML.UNINITIALIZED, 'Uninitialized');
    fake.state({});
    ok(nvml.init());
    assert.equal(ok(nvml.deviceCount()), 1, 'control: the same calls once init succeeds');
    fake.state({ all: 999 });
    fails(nvml.driverVersion(), 'nvmlSystemGetDriverVersion', 999, 'Unknown Error');
    fake.state({ ret: { nvmlDeviceGetCount_v2: 18 } });
    fails(nvml.deviceCount(), 'nvmlDeviceGetCount_v2', 18, 'Driver/library version mismatch');
    fake.state({});
    ok(nvml.shutdown());
  });

  it('refuses a handle it did not give out, and every handle after shutdown, without calling NVML', () => {
    fake.state({ gpus: [{}, {}] });
    ok(nvml.init());
    const gpu = ok(nvml.handle(1));
    fails(nvml.uuid({ index: 7 }), 'nvmlDeviceGetUUID', NVML.INVALID_ARGUMENT, 'Invalid Argument');
    fails(nvml.handle(2), 'nvmlDeviceGetHandleByIndex_v2', NVML.INVALID_ARGUMENT, 'Invalid Argument');
    assert.equal(ok(nvml.uuid(gpu)), 'GPU-00000000-0000-0000-0000-000000000001', 'control: its own handle');
    ok(nvml.shutdown());
    fails(nvml.uuid(gpu), 'nvmlDeviceGetUUID', NVML.INVALID_ARGUMENT, 'Invalid Argument');
    ok(nvml.init());
    assert.equal(ok(nvml.uuid(ok(nvml.handle(1)))), 'GPU-00000000-0000-0000-0000-000000000001');
    ok(nvml.shutdown());
  });
});
