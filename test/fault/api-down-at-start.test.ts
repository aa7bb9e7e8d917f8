// The API server is unreachable when the agent starts (a closed readiness gate in front of it): the
// agent starts anyway, detects and queues, and once the gate opens the Node gets its conditions and
// the events arrive carrying the Node's UID. Events beyond the bounded pre-UID queue are counted.
// (test/e2e/agent-outage.test.ts covers an outage of an agent that had already connected.)
import assert from 'node:assert/strict';
import { test } from 'node:test';
import {
  AGENT_USER,
  eventsOf,
  faultSuite,
  healthz,
  initialCondition,
  kmsg,
  markedNames,
  metricOf,
  permanentRule,
  scrape,
  settledAccount,
  sum,
  temporaryRule,
  untilCondition,
  untilEvent,
  waitFor,
  writeMonitor,
} from './support.ts';

const { id, source, condition } = markedNames('down', 'Down');
/** EventDispatcher's MAX_PENDING: events wait for the Node UID in a queue this long. */
const PENDING_LIMIT = 1000;
const BURST = PENDING_LIMIT + 50;

const s = faultSuite({
  front: 'closed-gate',
  configs: (dir) => [
    writeMonitor(dir, 'down.yaml', {
      plugin: 'kmsg',
      source,
      conditions: [initialCondition(condition, 'NoProblem', 'all good')],
      rules: [
        permanentRule(condition, 'DiskGone', `${id}: disk vanished`),
        temporaryRule('Burst', `${id}: burst line \\d+`),
      ],
    }),
  ],
});

test('started without an API server: detects, queues, and reports everything once it is reachable', {
  timeout: 360_000,
}, async () => {
  const { cp, agent } = s;
  kmsg(`${id}: disk vanished`);
  // In slices, so the 128 KiB kernel ring never overflows between two reads of the agent.
  for (let i = 0; i < BURST; i += 150) {
    kmsg(...Array.from({ length: Math.min(150, BURST - i) }, (_, k) => `${id}: burst line ${i + k}`));
    await new Promise((r) => setTimeout(r, 300));
  }
  const counter = (reason: string) => metricOf(agent, 'problem_counter', `reason="${reason}"`);
  await waitFor(async () => (await counter('Burst')) === BURST, 60_000, agent.output);
  assert.equal(await counter('DiskGone'), 1);
  const m = await scrape(agent.metricsUrl);
  assert.ok(sum(m, 'npd_node_info_fetch_total', 'result="failure"') > 0, 'failed UID fetches are counted');
  assert.equal(sum(m, 'npd_events_dropped_total', 'point="awaiting_node_uid"'), BURST + 1 - PENDING_LIMIT);
  assert.equal(cp.countAudit({ user: AGENT_USER }), 0, 'nothing reached the apiserver');
  assert.equal(agent.child.exitCode, null, 'the agent keeps running');
  assert.equal(await healthz(agent), 200);

  s.gate.open = true;
  await untilCondition(s, condition, 'True');
  await untilEvent(s, source, 'DiskGone');
  const events = await eventsOf(cp, source);
  for (const e of events) assert.equal(e.involvedObject.uid, cp.nodeUid, `${e.reason} carries the Node UID`);
  // Every detected event is recorded or counted as dropped before the recorder...
  const a = await settledAccount(agent, source);
  assert.equal(a.recorded + a.droppedBeforeRecorder, BURST + 1);
  // ...and the apiserver saw exactly the writes the agent counts as successful.
  const ok = cp.countAudit({ user: AGENT_USER, resource: 'events', code: (c) => c < 300 });
  assert.equal(ok, a.written, 'successful event writes in the audit log == npd_events_written_total');
  assert.equal(agent.child.exitCode, null);
});
