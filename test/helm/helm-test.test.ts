// `helm test`: the chart's test Pod, and the check it runs, executed here exactly as rendered (its
// `node -e` script) against a live agent. Control: an agent that does not answer fails it.
//   node --import tsx --test test/helm/helm-test.test.ts
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { describe, test } from 'node:test';
import { type Container, type Doc, one } from '../deploy/support.ts';
import { freePort, startAgent } from '../support/agent-process.ts';
import { helmTemplate, toolsOrSkip } from './support.ts';

const { tools, skip } = await toolsOrSkip();

const annotations = (d: Doc): Record<string, string> =>
  (d.metadata as { annotations?: Record<string, string> }).annotations ?? {};
const testPod = (docs: Doc[]) => docs.find((d) => d.kind === 'Pod' && 'helm.sh/hook' in annotations(d));
const command = (pod: Doc): string[] =>
  (pod.spec as { containers: { command: string[] }[] }).containers[0]?.command ?? [];

describe('helm test', { skip }, () => {
  const withService = { metrics: { service: { enabled: true } } };

  test('a test hook Pod runs in the agent image, unprivileged, pointed at the headless Service', async () => {
    const pod = testPod(await helmTemplate(tools!, withService));
    assert.ok(pod, 'a test Pod');
    assert.equal(annotations(pod)['helm.sh/hook'], 'test');
    const c = (pod.spec as { containers: Container[] }).containers[0] as Container & { command: string[] };
    const ds = one(await helmTemplate(tools!, withService), 'DaemonSet');
    assert.equal(
      c.image,
      (ds.spec as { template: { spec: { containers: Container[] } } }).template.spec.containers[0]?.image,
    );
    assert.deepEqual(c.command.slice(0, 3), ['node', '--input-type=module', '-e']);
    const env = Object.fromEntries(c.env.map((e) => [e.name, e.value]));
    assert.deepEqual(env, {
      NPD_TEST_HOST: 'node-problem-detector.kube-system.svc',
      NPD_TEST_STATUS_PORT: '20256',
      NPD_TEST_METRICS_PORT: '20257',
    });
    assert.equal(testPod(await helmTemplate(tools!, {})), undefined, 'no Service, no test Pod');
  });

  test('its check passes against a live agent and fails against one that does not answer', async () => {
    const pod = testPod(await helmTemplate(tools!, withService));
    assert.ok(pod);
    const script = command(pod)[3] as string;
    const run = (status: string, metrics: string) =>
      spawnSync(process.execPath, ['--input-type=module', '-e', script], {
        env: {
          PATH: process.env.PATH,
          NPD_TEST_HOST: 'localhost',
          NPD_TEST_STATUS_PORT: status,
          NPD_TEST_METRICS_PORT: metrics,
        },
        encoding: 'utf8',
        timeout: 30_000,
      });
    const agent = await startAgent(['--enable-k8s-exporter=false']);
    try {
      const ok = run(new URL(agent.statusUrl).port, new URL(agent.metricsUrl).port);
      assert.equal(ok.status, 0, ok.stdout + ok.stderr);
      assert.match(ok.stdout, /1 agents, 0 failed checks/);
      const closed = String(await freePort());
      const bad = run(closed, new URL(agent.metricsUrl).port);
      assert.equal(bad.status, 1, bad.stdout);
      assert.match(bad.stdout, /FAIL http:\/\/127\.0\.0\.1:\d+\/healthz/);
    } finally {
      await agent.stop();
    }
  });
});
