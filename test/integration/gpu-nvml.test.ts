/**
 * The NVML monitor in the real agent process (--config.gpu-monitor), its library the fake NVML built
 * from C (test/support/fake-nvml/) and loaded through the koffi binding: a scripted volatile DBE raises
 * GPUUnhealthy True with NvidiaDoubleBitError on /conditions; nvmlInit_v2 answering Unknown Error (999, as
 * inside a container after a host `systemctl daemon-reload`) makes it Unknown, never False; the healthy
 * default H200 is the control (False). Without the library: no condition, and the start-up summary says why.
 */
import assert from 'node:assert/strict';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, it } from 'node:test';
import { startAgent, waitFor } from '../support/agent-process.ts';
import { type FakeNvmlHarness, fakeNvmlHarness } from '../support/fake-nvml/harness.ts';
import type { FakeNvmlState } from '../support/fake-nvml/state.ts';

interface WireCondition {
  type: string;
  status: string;
  reason: string;
  message: string;
}

const dir = mkdtempSync(join(tmpdir(), 'npd-gpu-nvml-'));
let fake: FakeNvmlHarness | undefined;

function harness(): FakeNvmlHarness {
  fake ??= fakeNvmlHarness();
  return fake;
}

/** Runs the agent with only the NVML monitor on the fake in `state`; returns GPUUnhealthy once set. */
async function gpuCondition(state: FakeNvmlState | undefined, until: (c: WireCondition) => boolean) {
  const f = harness();
  if (state) f.state(state);
  else f.defaults();
  const config = join(dir, 'gpu-nvml.yaml');
  writeFileSync(config, `plugin: nvml\nsource: gpu-nvml-monitor\nlibrary: ${f.library}\ninterval: 5s\n`);
  const agent = await startAgent([`--config.gpu-monitor=${config}`, '--enable-k8s-exporter=false'], f.env);
  let found: WireCondition | undefined;
  try {
    await waitFor(
      async () => {
        const body = (await (await fetch(`${agent.statusUrl}/conditions`)).json()) as WireCondition[];
        found = body.find((c) => c.type === 'GPUUnhealthy');
        return found !== undefined && until(found);
      },
      30_000,
      agent.output,
    );
  } catch (err) {
    await agent.stop();
    throw err;
  }
  // SIGTERM ends the event wait in flight (within one 1 s wait) and the agent exits cleanly.
  assert.equal(await agent.stop(), 0, agent.output());
  return found as WireCondition;
}

describe('NVML monitor on the real agent with the fake NVML', () => {
  after(() => fake?.close());

  it('control: the healthy H200 is False', async () => {
    const c = await gpuCondition(undefined, (x) => x.status !== 'Unknown');
    assert.equal(c.status, 'False');
    assert.equal(c.reason, 'GPUIsHealthy');
  });

  it('a volatile double-bit ECC error is True, NvidiaDoubleBitError, naming the GPU', async () => {
    const c = await gpuCondition({ gpus: [{ ecc: { uncorrectedVolatile: 2 } }] }, (x) => x.status === 'True');
    assert.equal(c.reason, 'NvidiaDoubleBitError');
    assert.match(c.message, /GPU 0 \(\w{4}:\w{2}:\w{2}, GPU-[0-9a-f-]+, NVIDIA H200\): 2 uncorrectable/);
  });

  it('nvmlInit_v2 answering Unknown Error is Unknown (NVMLUnavailable), not False', async () => {
    const c = await gpuCondition({ init: 999 }, (x) => x.status !== 'False');
    assert.equal(c.status, 'Unknown');
    assert.equal(c.reason, 'NVMLUnavailable');
    assert.match(c.message, /restart the pod/);
  });

  it('without the library: no GPUUnhealthy at all, and the start-up summary says why, once', async () => {
    const config = join(dir, 'gpu-none.yaml');
    writeFileSync(config, `plugin: nvml\nlibrary: ${join(dir, 'no-libnvidia-ml.so.1')}\n`);
    const agent = await startAgent([`--config.gpu-monitor=${config}`, '--enable-k8s-exporter=false'], {
      LOG_LEVEL: 'info',
    });
    try {
      const body = (await (await fetch(`${agent.statusUrl}/conditions`)).json()) as WireCondition[];
      assert.deepEqual(
        body.filter((c) => c.type === 'GPUUnhealthy'),
        [],
      );
    } finally {
      await agent.stop();
    }
    const started = agent
      .output()
      .split('\n')
      .filter((l) => l.includes('agent started'));
    assert.equal(started.length, 1, agent.output());
    assert.match(
      started[0] ?? '',
      /nothing to watch: gpu-nvml-monitor: no NVML library \(.*no-libnvidia-ml\.so\.1\)/,
    );
  });
});
