import assert from 'node:assert/strict';
import { after, before, beforeEach, describe, it } from 'node:test';
import { type Answer, EVENT, NVML, type Nvml, NvmlError } from '../../../src/host/nvml/api.ts';
import { nvmlLoader } from '../../../src/host/nvml/binding.ts';
import { type FakeNvmlHarness, fakeNvmlHarness } from '../../support/fake-nvml/harness.ts';

/** nvmlEventSetWait_v2 through koffi's async call, against the fake NVML's scripted events. */
let fake: FakeNvmlHarness;
let nvml: Nvml;

function ok<T>(answer: Answer<T>): T {
  if (answer instanceof NvmlError) assert.fail(`unexpected ${answer.message}`);
  return answer;
}

/** A set with both GPUs of a two-GPU fake registered for Xid events. */
function xidSet() {
  fake.state({ gpus: [{}, {}] });
  ok(nvml.init());
  const set = ok(nvml.eventSetCreate());
  for (const index of [0, 1]) ok(nvml.registerEvents(ok(nvml.handle(index)), EVENT.XID_CRITICAL, set));
  return set;
}

before(() => {
  fake = fakeNvmlHarness();
  const loaded = nvmlLoader(fake.library)();
  assert.ok(!(loaded instanceof Error), String(loaded));
  nvml = loaded;
});
beforeEach(() => fake.clearEvents());
after(() => fake.close());

describe('NVML binding: the event wait', () => {
  it('runs off the event loop: a timer set during the wait fires first, and writes the event it delivers', async () => {
    const set = xidSet();
    const order: string[] = [];
    const waited = nvml.eventWait(set, 10_000).then((answer) => {
      order.push('wait resolved');
      return answer;
    });
    // Were the wait blocking the loop, this timer could not run until the wait had timed out, and the
    // wait would answer TIMEOUT after 10 s instead of the event the timer writes.
    setTimeout(() => {
      order.push('timer fired');
      fake.events({ index: 1, type: EVENT.XID_CRITICAL, data: 79 });
    }, 0);
    const event = ok(await waited);
    assert.deepEqual(order, ['timer fired', 'wait resolved']);
    assert.deepEqual(event, {
      index: 1,
      eventType: EVENT.XID_CRITICAL,
      eventData: 79,
      gpuInstanceId: 0xffffffff,
      computeInstanceId: 0xffffffff,
    });
    ok(nvml.eventSetFree(set));
    ok(nvml.shutdown());
  });

  it('delivers written events in order, with MIG instance ids and the unknown Xid 999', async () => {
    const set = xidSet();
    fake.events(
      { index: 0, type: EVENT.XID_CRITICAL, data: 31, gpuInstanceId: 1, computeInstanceId: 2 },
      { index: 1, type: EVENT.XID_CRITICAL, data: 999 },
    );
    const first = ok(await nvml.eventWait(set, 1000));
    const second = ok(await nvml.eventWait(set, 1000));
    assert.deepEqual(
      [first.index, first.eventData, first.gpuInstanceId, first.computeInstanceId],
      [0, 31, 1, 2],
    );
    assert.deepEqual([second.index, second.eventData], [1, 999]);
    ok(nvml.eventSetFree(set));
    ok(nvml.shutdown());
  });

  it('answers TIMEOUT when no event came, and then the event written after', async () => {
    const set = xidSet();
    const none = await nvml.eventWait(set, 20);
    assert.ok(none instanceof NvmlError);
    assert.deepEqual([none.code, none.message], [NVML.TIMEOUT, 'nvmlEventSetWait_v2: Timeout (10)']);
    fake.events({ index: 0, type: EVENT.XID_CRITICAL, data: 43 });
    assert.equal(ok(await nvml.eventWait(set, 1000)).eventData, 43, 'control: a written event is delivered');
    ok(nvml.eventSetFree(set));
    ok(nvml.shutdown());
  });

  it('gives no index for a device address it never handed out', async () => {
    const set = xidSet();
    fake.events({ index: -1, type: EVENT.XID_CRITICAL, data: 48 });
    const event = ok(await nvml.eventWait(set, 1000));
    assert.deepEqual([event.index, event.eventData], [undefined, 48]);
    ok(nvml.eventSetFree(set));
    ok(nvml.shutdown());
  });

  it('delivers only registered types (NVML does so too); GPU_IS_LOST from the wait', async () => {
    const set = xidSet();
    fake.events(
      { index: 0, type: EVENT.DOUBLE_BIT_ECC, data: 0 },
      { index: 0, type: EVENT.XID_CRITICAL, data: 63 },
    );
    assert.equal(
      ok(await nvml.eventWait(set, 1000)).eventData,
      63,
      'the unregistered DBE event is not delivered',
    );
    fake.events({ ret: NVML.GPU_IS_LOST });
    const lost = await nvml.eventWait(set, 1000);
    assert.ok(lost instanceof NvmlError);
    assert.deepEqual([lost.code, lost.message], [15, 'nvmlEventSetWait_v2: GPU is lost (15)']);
    ok(nvml.eventSetFree(set));
    ok(nvml.shutdown());
  });

  it('registers only supported types, and refuses a freed set without calling NVML', async () => {
    fake.state({ gpus: [{ events: EVENT.XID_CRITICAL }] });
    ok(nvml.init());
    const gpu = ok(nvml.handle(0));
    const set = ok(nvml.eventSetCreate());
    const refused = nvml.registerEvents(gpu, EVENT.XID_CRITICAL | EVENT.GPU_RECOVERY_ACTION, set);
    assert.ok(refused instanceof NvmlError);
    assert.deepEqual([refused.call, refused.code], ['nvmlDeviceRegisterEvents', NVML.NOT_SUPPORTED]);
    assert.equal(nvml.registerEvents(gpu, EVENT.XID_CRITICAL, set), undefined, 'control: the supported type');
    ok(nvml.eventSetFree(set));
    const freed = await nvml.eventWait(set, 1000);
    assert.ok(freed instanceof NvmlError);
    assert.equal(freed.code, NVML.INVALID_ARGUMENT);
    ok(nvml.shutdown());
  });
});
