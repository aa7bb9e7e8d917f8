import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { monitorDeps } from '../../../../src/agent/monitor-deps.ts';
import { parseOptions } from '../../../../src/agent/options.ts';
import { FakeClock } from '../../../../src/core/clock.ts';
import { createLogger } from '../../../../src/core/logger.ts';
import { createRegistry } from '../../../../src/core/metrics.ts';
import type { Status } from '../../../../src/core/types.ts';
import { GPU_CHECKS } from '../../../../src/monitors/gpu/checks/index.ts';
import { gpuMonitorType } from '../../../../src/monitors/gpu/monitor.ts';
import { h200, MemoryNvml } from '../../../support/nvml-memory.ts';
import { gpuConfig, Harness, pciRoot, settle } from './harness.ts';

const FROM_NODE = { checks: { 'device-count': { expectedCountFrom: 'node' } } };

/** A late-bound capacity source, as the agent gives it: undefined until the exporter knows the Node. */
function nodeSource() {
  const node: { capacity: string | undefined; asked: string[] } = { capacity: undefined, asked: [] };
  const read = (resource: string) => {
    node.asked.push(resource);
    return node.capacity;
  };
  return { node, read };
}

describe("GPU monitor: the expected count from the Node's nvidia.com/gpu capacity", () => {
  it('unknown at start (said once), then capacity 2 with one GPU in NVML: NvidiaDeviceCountMismatch', async () => {
    const { node, read } = nodeSource();
    const logged: { msg: string }[] = [];
    const logger = createLogger({ format: 'json', write: (l) => logged.push(JSON.parse(l)) });
    const h = new Harness({ config: FROM_NODE, deps: { nodeCapacity: read, logger } });
    await h.start();
    assert.equal(h.condition()?.status, 'False', 'unknown capacity: no finding from it');
    await h.advance(60_000);
    const told = logged.filter((l) => /capacity is not known/.test(l.msg));
    assert.equal(told.length, 1, 'said once, not at every poll');
    assert.match(told[0]?.msg ?? '', /compared with the PCI bus only/);
    assert.ok(
      (await h.metric('npd_gpu_expected_count')).includes(
        'npd_gpu_expected_count{source="gpu-nvml-monitor",from="node"} 0',
      ),
    );
    node.capacity = '2';
    await h.advance(60_000);
    assert.equal(h.condition()?.status, 'True');
    assert.equal(h.condition()?.reason, 'NvidiaDeviceCountMismatch');
    assert.match(h.condition()?.message ?? '', /capacity is 2 .* and NVML sees 1/);
    assert.deepEqual([...new Set(node.asked)], ['nvidia.com/gpu']);
    assert.ok(logged.some((l) => /compared with the Node's nvidia\.com\/gpu capacity, 2/.test(l.msg)));
    await h.stop();
  });

  it('control: capacity equal to NVML is no finding; capacity "0" (plugin gone) counts as unknown', async () => {
    const { node, read } = nodeSource();
    node.capacity = '1';
    const h = new Harness({ config: FROM_NODE, deps: { nodeCapacity: read } });
    await h.start();
    assert.equal(h.condition()?.status, 'False');
    node.capacity = '0';
    await h.advance(60_000);
    assert.equal(h.condition()?.status, 'False');
    node.capacity = '2';
    await h.advance(60_000);
    assert.equal(h.condition()?.status, 'True', 'the same monitor fires once the capacity is above NVML');
    await h.stop();
  });

  it('without expectedCountFrom the source is never asked', async () => {
    const { node, read } = nodeSource();
    node.capacity = '8';
    const h = new Harness({ deps: { nodeCapacity: read } });
    await h.start();
    assert.equal(h.condition()?.status, 'False');
    assert.deepEqual(node.asked, []);
    await h.stop();
  });
});

describe('GPU monitor: --gpu-expected-count', () => {
  async function run(argv: string[], config: Record<string, unknown> = { expectedCount: 1 }) {
    const root = pciRoot(['0000:18:00.0']);
    const parsed = parseOptions([`--host-root=${root}`, ...argv], {}, 'node-1');
    const clock = new FakeClock(0);
    const nvml = new MemoryNvml(clock, [h200(0x18)]);
    const deps = monitorDeps(parsed.options, clock, createRegistry(), createLogger({ write: () => {} }));
    const monitor = gpuMonitorType(() => () => nvml, GPU_CHECKS).create(gpuConfig(config), deps);
    const seen: Status[] = [];
    await monitor.start((s) => seen.push(s));
    await settle();
    const stopping = monitor.stop();
    clock.advance(1000);
    await stopping;
    return { errors: parsed.errors, condition: seen.at(-1)?.conditions[0] };
  }

  it("8 expected and NVML sees 1: NvidiaDeviceCountMismatch, over the config's expectedCount 1", async () => {
    const { errors, condition } = await run(['--gpu-expected-count=8']);
    assert.deepEqual(errors, []);
    assert.equal(condition?.status, 'True');
    assert.equal(condition?.reason, 'NvidiaDeviceCountMismatch');
    assert.match(condition?.message ?? '', /NVML sees 1 GPUs, 8 expected/);
  });

  it("control: 1 expected, or the flag unset (0: the config's 1), is no finding", async () => {
    assert.equal((await run(['--gpu-expected-count=1'], {})).condition?.status, 'False');
    assert.equal((await run([])).condition?.status, 'False');
    assert.equal((await run([], { expectedCount: 8 })).condition?.status, 'True', 'the config alone fires');
  });

  it('a count that is not a whole number is a flag error', async () => {
    const parsed = parseOptions(['--gpu-expected-count=-2'], {}, 'node-1');
    assert.match(parsed.errors.join('\n'), /--gpu-expected-count must be a whole number of GPUs/);
    assert.deepEqual(parseOptions(['--gpu-expected-count=8'], {}, 'node-1').errors, []);
  });
});
