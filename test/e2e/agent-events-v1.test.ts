// --events-api=events.k8s.io: EventSeries semantics (client-go tools/events) on the real API server,
// compared with core/v1 on the same storm (agent-storm.test.ts: 500 lines make 25 writes there).
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { type ControlPlane, startControlPlane } from './harness/controlplane.ts';
import {
  type AgentProcess,
  agentArgs,
  kmsg,
  marker,
  metricValue,
  startAgent,
  workDir,
  writeConfig,
} from './support.ts';

const LINES = 500;
let cp: ControlPlane;
let agent: AgentProcess;
const id = marker('v1');

before(
  async () => {
    cp = await startControlPlane();
    const config = writeConfig(workDir(), 'v1.yaml', [
      'plugin: kmsg',
      `source: ${id}-monitor`,
      'rules:',
      '  - type: temporary',
      '    reason: SeriesLine',
      `    pattern: '${id}: nic reset on port \\d+'`,
    ]);
    agent = await startAgent(
      [...agentArgs(cp.agentKubeconfig, cp.nodeName, [config]), '--events-api=events.k8s.io'],
      { KUBECONFIG: '' },
    );
  },
  { timeout: 60 * 60_000 },
);

after(async () => {
  const code = await agent?.stop();
  await cp?.stop({ failed: code !== 0 });
});

interface SeriesEvent {
  reason: string;
  note?: string;
  series?: { count: number };
  regarding: { kind: string; name: string; uid?: string; apiVersion?: string };
  reportingController?: string;
}

test(`${LINES} identical lines become one events.k8s.io/v1 Event with a series: 2 writes instead of 25`, async () => {
  const mark = cp.auditMark();
  const line = `${id}: nic reset on port 3`;
  kmsg(...Array.from({ length: LINES }, () => line));
  const filter = { user: 'npd-agent', resource: 'events', apiGroup: 'events.k8s.io' } as const;
  await cp.waitForAudit({ ...filter, verb: 'patch' }, mark, 1, 30_000);
  await new Promise((r) => setTimeout(r, 3000));
  assert.equal(cp.countAudit({ ...filter, verb: 'create' }, mark), 1, 'the first occurrence is created');
  assert.equal(
    cp.countAudit({ ...filter, verb: 'patch' }, mark),
    1,
    'the second starts the series; later ones wait for the 6-minute pass',
  );
  assert.equal(
    cp.countAudit({ user: 'npd-agent', resource: 'events', apiGroup: '' }, mark),
    0,
    'no core/v1 writes',
  );
  const list = JSON.parse(
    await cp.kubectl(['get', 'events.v1.events.k8s.io', '-n', 'default', '-o', 'json']),
  ) as { items: SeriesEvent[] };
  const ours = list.items.filter((e) => e.reportingController === `${id}-monitor`);
  assert.equal(ours.length, 1);
  assert.equal(ours[0]?.series?.count, 2);
  assert.equal(ours[0]?.note, line);
  assert.deepEqual(
    { kind: ours[0]?.regarding.kind, name: ours[0]?.regarding.name, uid: ours[0]?.regarding.uid },
    { kind: 'Node', name: cp.nodeName, uid: cp.nodeUid },
  );
  const forNode = await cp.kubectl(['events', '--for', `node/${cp.nodeName}`]);
  assert.match(forNode, /SeriesLine/);
  assert.equal(
    (await metricValue(
      agent.metricsUrl,
      `npd_events_v1_written_total{source="${id}-monitor",verb="create"}`,
    )) ?? 0,
    1,
  );
});
