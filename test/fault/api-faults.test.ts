// The API server misbehaves: 429 with Retry-After, 500/503, and answers slower than the request
// timeout. A fault proxy (fault-proxy.ts) sits between the agent and the real kube-apiserver and faults
// the first N matching requests. The agent keeps running, every failed request is a metric, and the
// Node and its Events end up right.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import {
  type AgentProcess,
  type ControlPlane,
  eventsOf,
  type Fault,
  type FaultRule,
  faultSuite,
  initialCondition,
  kmsg,
  markedNames,
  metricOf,
  permanentRule,
  settledAccount,
  temporaryRule,
  untilCondition,
  untilEvent,
  waitFor,
  writeMonitor,
} from './support.ts';

const s = faultSuite({ front: 'proxy' });
const EVENTS = /^\/api\/v1\/namespaces\/default\/events$/;

interface Case {
  id: string;
  source: string;
  condition: string;
  cp: ControlPlane;
  agent: AgentProcess;
}

/** An agent behind the proxy with one condition (Broken*) and a temporary rule (Flaky*). */
async function startCase(name: string, flags: string[] = []): Promise<Case> {
  const { id, source, condition } = markedNames(name, 'Broken');
  const config = writeMonitor(s.dir, `${id}.yaml`, {
    plugin: 'kmsg',
    source,
    conditions: [initialCondition(condition, 'Fine')],
    rules: [
      permanentRule(condition, 'Broke', `${id}: device broke`),
      temporaryRule('Flaky$n', `${id}: flaky (?P<n>\\d+)`),
    ],
  });
  const c = { id, source, condition, cp: s.cp, agent: await s.startAgent([config], { flags }) };
  await untilCondition(c, condition, 'False', 30_000);
  return c;
}

const statusPath = () => new RegExp(`^/api/v1/nodes/${s.cp.nodeName}/status$`);

const metric = (c: Case, name: string, ...labels: string[]) => metricOf(c.agent, name, ...labels);

async function finish(c: Case): Promise<void> {
  assert.equal(c.agent.child.exitCode, null, 'the agent kept running');
  assert.equal(await c.agent.stop(), 0);
}

const conditionIs = (c: Case, status: string) => untilCondition(c, c.condition, status, 90_000);
const metricReaches = (c: Case, n: number, name: string, ...labels: string[]) =>
  waitFor(async () => (await metric(c, name, ...labels)) >= n, 60_000, c.agent.output);

const fault = (method: string, path: RegExp, times: number, f: Fault) =>
  s.proxy.inject({ method, path, times, fault: f });

test('429 with Retry-After on event POSTs and status PATCHes: both retried until they land', {
  timeout: 300_000,
}, async () => {
  const c = await startCase('f429');
  fault('POST', EVENTS, 3, { kind: 'status', status: 429, retryAfter: '1' });
  fault('PATCH', statusPath(), 3, { kind: 'status', status: 429, retryAfter: '1' });
  kmsg(`${c.id}: device broke`);
  await conditionIs(c, 'True');
  await untilEvent(c, c.source, 'Broke');
  assert.equal(await metric(c, 'npd_apiserver_requests_total', 'code="429"'), 6);
  assert.equal(await metric(c, 'npd_events_retries_total', `source="${c.source}"`), 3);
  assert.equal(await metric(c, 'npd_condition_sync_total', 'result="failure"'), 3);
  const a = await settledAccount(c.agent, c.source);
  assert.equal(a.givenUp, 0, 'nothing abandoned');
  assert.equal((await eventsOf(c.cp, c.source)).length, 1);
  await finish(c);
});

test('500 without Retry-After: an event is given up (counted), 503 with it is retried, status retried at once', {
  timeout: 300_000,
}, async () => {
  const c = await startCase('f500');
  fault('POST', EVENTS, 1, { kind: 'status', status: 500 });
  kmsg(`${c.id}: flaky 1`);
  await metricReaches(c, 1, 'npd_events_given_up_total', 'reason="rejected"');
  fault('POST', EVENTS, 2, { kind: 'status', status: 503, retryAfter: '1' });
  kmsg(`${c.id}: flaky 2`);
  await untilEvent(c, c.source, 'Flaky2');
  fault('PATCH', statusPath(), 3, { kind: 'status', status: 500 });
  kmsg(`${c.id}: device broke`);
  await conditionIs(c, 'True');
  await untilEvent(c, c.source, 'Broke');
  assert.ok((await metric(c, 'npd_condition_sync_retries_total')) >= 3, 'quick retries within one sync');
  assert.equal(await metric(c, 'npd_apiserver_requests_total', 'code="500"'), 4);
  assert.equal(await metric(c, 'npd_apiserver_requests_total', 'code="503"'), 2);
  assert.equal(await metric(c, 'npd_events_retries_total', `source="${c.source}"`), 2);
  const reasons = (await eventsOf(c.cp, c.source)).map((e) => e.reason).sort();
  assert.deepEqual(reasons, ['Broke', 'Flaky2'], 'the given-up event is the only one missing');
  const a = await settledAccount(c.agent, c.source);
  assert.equal(a.givenUp, 1, 'the one loss is counted');
  await finish(c);
});

test('slower than --api-request-timeout: timeouts are counted and retried, nothing is doubled', {
  timeout: 300_000,
}, async () => {
  const c = await startCase('fslow', ['--api-request-timeout=2s']);
  // The event POST is answered late but still executed; the status PATCH is never answered at all.
  fault('POST', EVENTS, 1, { kind: 'delay', ms: 4000 });
  fault('PATCH', statusPath(), 1, { kind: 'hang', ms: 4000 });
  kmsg(`${c.id}: device broke`);
  await conditionIs(c, 'True');
  await metricReaches(c, 1, 'npd_events_retries_total', `source="${c.source}"`);
  await untilEvent(c, c.source, 'Broke');
  assert.equal(await metric(c, 'npd_apiserver_requests_total', 'code="error"'), 2, 'both timeouts counted');
  assert.ok((await metric(c, 'npd_condition_sync_retries_total')) >= 1);
  await settledAccount(c.agent, c.source);
  // Let a late duplicate show up before asserting there is none.
  await new Promise((r) => setTimeout(r, 5000));
  const events = await eventsOf(c.cp, c.source);
  assert.equal(events.length, 1, 'one Event object despite the retry');
  assert.equal(events[0]?.count ?? 1, 1);
  await finish(c);
});

test('/readyz turns 503 after two failed condition syncs in a row and 200 at the next success', {
  timeout: 300_000,
}, async () => {
  const c = await startCase('fready');
  const readyz = async () => (await fetch(`${c.agent.statusUrl}/readyz`)).status;
  await waitFor(async () => (await readyz()) === 200, 30_000, c.agent.output);
  const outage: FaultRule = {
    method: 'PATCH',
    path: statusPath(),
    times: 10_000,
    fault: { kind: 'status', status: 500 },
  };
  s.proxy.inject(outage);
  kmsg(`${c.id}: device broke`);
  await metricReaches(c, 1, 'npd_condition_sync_total', 'result="failure"');
  assert.equal(await readyz(), 200, 'one failed sync is not an outage');
  await waitFor(async () => (await readyz()) === 503, 30_000, c.agent.output);
  assert.ok((await metric(c, 'npd_condition_sync_total', 'result="failure"')) >= 2);
  outage.times = 0;
  await conditionIs(c, 'True');
  await waitFor(async () => (await readyz()) === 200, 30_000, c.agent.output);
  await finish(c);
});
