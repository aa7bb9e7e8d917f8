/**
 * The OTLP sink in Kubernetes mode: the agent against the real kube-apiserver of the e2e harness and a real
 * OpenTelemetry Collector. The record carries the Node's UID as k8s.node.uid, and the same event reaches
 * the API server too.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { type ControlPlane, startControlPlane } from '../e2e/harness/controlplane.ts';
import { agentArgs, kmsg, marker, shippedRules, workDir } from '../e2e/support.ts';
import { type AgentProcess, freePort, kmsgWritable, startAgent, waitFor } from '../support/agent-process.ts';
import { type Collector, ensureCollector, startCollector } from '../support/otelcol.ts';

describe('OTLP sink in Kubernetes mode', { skip: !kmsgWritable() }, () => {
  let cp: ControlPlane;
  let collector: Collector;
  let agent: AgentProcess;

  before(
    async () => {
      const bin = await ensureCollector();
      cp = await startControlPlane();
      collector = await startCollector(bin, await freePort());
      const configs = [shippedRules(workDir(), 'kernel.yaml')];
      agent = await startAgent(
        [
          ...agentArgs(cp.agentKubeconfig, cp.nodeName, configs),
          `--event-otlp-endpoint=${collector.endpoint}`,
        ],
        { KUBECONFIG: '' },
      );
    },
    { timeout: 60 * 60_000 },
  );

  after(async () => {
    const code = await agent?.stop();
    await collector?.stop();
    await cp?.stop({ failed: code !== 0 });
  });

  it('sends the Node UID as k8s.node.uid, and the API server gets the event as well', async () => {
    const m = marker('otlpkube');
    kmsg(`Killed process 4343 (${m}) total-vm:10240kB, anon-rss:2048kB, file-rss:0kB, shmem-rss:0kB`);
    const mine = () => collector.records().filter((r) => String(r.body).includes(m));
    await waitFor(() => mine().length === 1, 30_000, agent.output);
    const uid = (await cp.kubectl(['get', 'node', cp.nodeName, '-o', 'jsonpath={.metadata.uid}'])).trim();
    assert.match(uid, /^[0-9a-f-]{36}$/);
    const record = mine()[0];
    assert.equal(record?.resource['k8s.node.uid'], uid);
    assert.equal(record?.resource['k8s.object.uid'], uid);
    assert.equal(record?.resource['k8s.node.name'], cp.nodeName);
    assert.equal(record?.attributes['k8s.event.reason'], 'OOMKilling');
    await waitFor(
      async () => (await cp.kubectl(['get', 'events', '-n', 'default', '-o', 'json'])).includes(m),
      30_000,
      agent.output,
    );
  });
});
