// An event storm against the real API server: the spam filter and counting bound the writes, which
// the apiserver's audit log counts independently of the agent.
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { type ControlPlane, startControlPlane } from './harness/controlplane.ts';
import {
  type AgentProcess,
  agentArgs,
  type KubeEventJson,
  kmsg,
  marker,
  metricValue,
  startAgent,
  waitFor,
  workDir,
  writeConfig,
} from './support.ts';

const LINES = 500;
/** client-go's spam filter: a bucket of 25 per source+object+type, refilled once per 300 s. */
const SPAM_BURST = 25;

let cp: ControlPlane;

function writeStormConfig(): string {
  return writeConfig(workDir(), 'storm.yaml', [
    'plugin: kmsg',
    `source: ${id}-monitor`,
    'rules:',
    '  - type: temporary',
    '    reason: StormLine',
    `    pattern: '${id}: link flapped on port \\d+'`,
  ]);
}
let agent: AgentProcess;
const id = marker('storm');

before(
  async () => {
    cp = await startControlPlane();
    agent = await startAgent(agentArgs(cp.agentKubeconfig, cp.nodeName, [writeStormConfig()]), {
      KUBECONFIG: '',
    });
  },
  { timeout: 60 * 60_000 },
);

after(async () => {
  const code = await agent?.stop();
  await cp?.stop({ failed: code !== 0 });
});

test(`${LINES} identical lines in a burst make a bounded number of API writes with the right count`, async () => {
  const mark = cp.auditMark();
  const line = `${id}: link flapped on port 7`;
  kmsg(...Array.from({ length: LINES }, () => line));
  const recorded = `npd_events_recorded_total{source="${id}-monitor",type="Warning"}`;
  await waitFor(async () => (await metricValue(agent.metricsUrl, recorded)) === LINES, 60_000, agent.output);
  const expectedCreates = 1;
  const expectedPatches = SPAM_BURST - 1;
  const filter = { user: 'npd-agent', resource: 'events', namespace: 'default' } as const;
  await cp.waitForAudit({ ...filter, verb: 'patch' }, mark, expectedPatches, 30_000);
  // Give stray writes time to show up before asserting that there are none.
  await new Promise((r) => setTimeout(r, 3000));
  assert.equal(cp.countAudit({ ...filter, verb: 'create' }, mark), expectedCreates);
  assert.equal(cp.countAudit({ ...filter, verb: 'patch' }, mark), expectedPatches);
  const spam = await metricValue(agent.metricsUrl, `npd_events_spam_filtered_total{source="${id}-monitor"}`);
  assert.equal(spam, LINES - SPAM_BURST);
  const events = JSON.parse(await cp.kubectl(['get', 'events', '-n', 'default', '-o', 'json'])) as {
    items: KubeEventJson[];
  };
  const ours = events.items.filter((e) => e.reason === 'StormLine' && e.message === line);
  assert.equal(ours.length, 1, 'one Event object');
  assert.equal(ours[0]?.count, SPAM_BURST, 'the count of the last write that passed the spam filter');
});

test('--kube-api-qps and --kube-api-burst hold writes back, and every event still lands', async () => {
  assert.equal(await agent.stop(), 0);
  const throttled = await startAgent(
    [
      ...agentArgs(cp.agentKubeconfig, cp.nodeName, [writeStormConfig()]),
      '--kube-api-qps=2',
      '--kube-api-burst=1',
    ],
    { KUBECONFIG: '' },
  );
  agent = throttled;
  const mark = cp.auditMark();
  const distinct = Array.from({ length: 6 }, (_, i) => `${id}: link flapped on port ${100 + i}`);
  kmsg(...distinct);
  const filter = { user: 'npd-agent', resource: 'events', namespace: 'default', verb: 'create' } as const;
  await cp.waitForAudit(filter, mark, distinct.length, 60_000);
  const waited = (await metricValue(throttled.metricsUrl, 'npd_apiserver_throttled_seconds_total')) ?? 0;
  // Start-up's GET and PATCH plus six creates at 2 per second after a burst of 1: >= 2.5 s of waiting.
  assert.ok(waited >= 2, `waited ${waited} s for the client-side limit`);
  const events = JSON.parse(await cp.kubectl(['get', 'events', '-n', 'default', '-o', 'json'])) as {
    items: KubeEventJson[];
  };
  for (const message of distinct) {
    assert.equal(events.items.filter((e) => e.message === message).length, 1, message);
  }
});
