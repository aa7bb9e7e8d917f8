// Subsystem conditions (--subsystem-conditions) against a real kube-apiserver, read with the real
// kubectl: a real Xid 79 line in /dev/kmsg makes AcceleratedHardwareReady False, the problem clearing
// and the window elapsing make it True, and a restart resumes a False one without flapping.
import assert from 'node:assert/strict';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { type ControlPlane, startControlPlane } from './harness/controlplane.ts';
import {
  type AgentProcess,
  agentArgs,
  kmsg,
  marker,
  type NodeConditionJson,
  nodeConditions,
  shippedRules,
  startAgent,
  waitFor,
  workDir,
} from './support.ts';

/** rules/gpu.yaml's own wording (kernel_rc.c's Xid format), with a marker in the free text. */
function xid79(tag: string): string {
  return `NVRM: Xid (PCI:0000:3b:00): 79, pid='<unknown>', name=<unknown>, GPU has fallen off the bus. ${tag}`;
}

describe('subsystem conditions against a real API server', () => {
  let cp: ControlPlane;
  let agent: AgentProcess | undefined;
  let args: string[];

  before(
    async () => {
      cp = await startControlPlane();
      const dir = workDir();
      // GPUUnhealthy returns to False 15 s after the last Xid, so the test can watch a recovery.
      const gpu = shippedRules(dir, 'gpu.yaml');
      const text = readFileSync(gpu, 'utf8').replace(
        /(message: no GPU error that needs a GPU reset, a reboot or a replacement)\n/,
        '$1\n    clearAfter: 15s\n',
      );
      assert.match(text, /clearAfter: 15s/);
      writeFileSync(gpu, text);
      const configs = [gpu, shippedRules(dir, 'kernel.yaml')];
      args = [
        ...agentArgs(cp.agentKubeconfig, cp.nodeName, configs),
        '--subsystem-conditions=true',
        '--subsystem-window=15s',
        '--subsystem-hold=5s',
      ];
      agent = await startAgent(args, { KUBECONFIG: '' });
    },
    { timeout: 60 * 60_000 },
  );

  after(async () => {
    const code = await agent?.stop();
    await cp?.stop({ failed: code !== 0 });
  });

  const condition = async (type: string): Promise<NodeConditionJson | undefined> =>
    (await nodeConditions(cp)).find((c) => c.type === type);

  test('the subsystems the configured rules watch start True, the others are absent', async () => {
    await waitFor(
      async () => (await condition('AcceleratedHardwareReady'))?.status === 'True',
      20_000,
      agent?.output,
    );
    for (const t of ['KernelReady', 'NetworkingReady', 'StorageReady'])
      assert.equal((await condition(t))?.status, 'True', t);
    assert.equal(
      await condition('ContainerRuntimeReady'),
      undefined,
      'no configured rule watches the runtime',
    );
  });

  test('a fatal Xid 79 makes AcceleratedHardwareReady False; the problem clearing and the window make it True', async () => {
    const tag = marker('xid');
    kmsg(xid79(tag));
    await waitFor(
      async () => {
        const c = await condition('AcceleratedHardwareReady');
        return c?.status === 'False' && c.reason === 'NvidiaXID79Error';
      },
      20_000,
      agent?.output,
    );
    const c = await condition('AcceleratedHardwareReady');
    assert.match(c?.message ?? '', /^fatal: /);
    assert.ok(c?.message?.includes(tag), c?.message);
    assert.match(c?.message ?? '', new RegExp(`kubectl events --for node/${cp.nodeName}`));
    assert.equal((await condition('GPUUnhealthy'))?.status, 'True', 'the problem condition stays as in NPD');
    assert.equal((await condition('KernelReady'))?.status, 'True');
    const describe = await cp.kubectl(['describe', 'node', cp.nodeName]);
    assert.match(describe, /AcceleratedHardwareReady\s+False\s.*NvidiaXID79Error/);
    writeFileSync(join(workDir(), 'describe-node.txt'), describe);
    console.log(conditionsExcerpt(describe));
    await waitFor(
      async () => (await condition('AcceleratedHardwareReady'))?.status === 'True',
      60_000,
      agent?.output,
    );
    assert.equal((await condition('AcceleratedHardwareReady'))?.reason, 'AcceleratedHardwareIsHealthy');
    assert.equal((await condition('GPUUnhealthy'))?.status, 'False');
  });

  test('a restart resumes a False AcceleratedHardwareReady with its transition time', async () => {
    kmsg(xid79(marker('xid')));
    await waitFor(
      async () => (await condition('AcceleratedHardwareReady'))?.status === 'False',
      20_000,
      agent?.output,
    );
    const before = await condition('AcceleratedHardwareReady');
    assert.equal(await agent?.stop(), 0);
    agent = await startAgent(args, { KUBECONFIG: '' });
    const started = (await condition('AcceleratedHardwareReady'))?.lastHeartbeatTime;
    // The new process has written the Node once its heartbeat moves.
    await waitFor(
      async () => (await condition('AcceleratedHardwareReady'))?.lastHeartbeatTime !== started,
      30_000,
      agent.output,
    );
    const after = await condition('AcceleratedHardwareReady');
    assert.equal(after?.status, 'False');
    assert.equal(after?.reason, 'NvidiaXID79Error');
    assert.equal(after?.lastTransitionTime, before?.lastTransitionTime, 'no flap across the restart');
    console.log(conditionsExcerpt(await cp.kubectl(['describe', 'node', cp.nodeName])));
  });
});

/** The Conditions table of `kubectl describe node`, for the test log. */
function conditionsExcerpt(describe: string): string {
  const start = describe.indexOf('Conditions:');
  const end = describe.indexOf('\nAddresses:', start);
  return describe.slice(start, end < 0 ? undefined : end);
}
