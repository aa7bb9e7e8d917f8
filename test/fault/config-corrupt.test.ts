// A config file is corrupted while hot reload (--config-reload-period=1s) watches it: half-written
// YAML, then the file removed. Each time the running config stays in force (it still detects and
// reports), npd_config_last_reload_successful drops to 0 and the failure is counted; a fixed file
// then applies without a restart. test/e2e/agent-lifecycle.test.ts covers a valid file with an
// invalid regex; this covers files that do not parse or do not exist.
import assert from 'node:assert/strict';
import { readFileSync, rmSync, writeFileSync } from 'node:fs';
import { test } from 'node:test';
import {
  eventsOf,
  faultSuite,
  healthz,
  initialCondition,
  kmsg,
  markedNames,
  metricOf,
  nodeCondition,
  permanentRule,
  temporaryRule,
  untilCondition,
  untilEvent,
  waitFor,
  writeMonitor,
} from './support.ts';

const { id, source, condition } = markedNames('reload', 'Reload');
let file: string;

function config(dir: string, extraRules: object[] = []): string {
  return writeMonitor(dir, 'reload.yaml', {
    plugin: 'kmsg',
    source,
    conditions: [initialCondition(condition, 'Fine')],
    rules: [permanentRule(condition, 'FirstRule', `${id}: first rule fires`), ...extraRules],
  });
}

const s = faultSuite({
  configs: (dir) => {
    file = config(dir);
    return [file];
  },
  flags: ['--config-reload-period=1s'],
  ready: (suite) => untilCondition(suite, condition, 'False', 30_000),
});

const metric = (name: string, ...labels: string[]) => metricOf(s.agent, name, ...labels);
const lastOk = () => metric('npd_config_last_reload_successful');
const failures = () => metric('npd_config_reloads_total', 'result="failure"');

test('a corrupted or missing config is refused, the running one keeps working, a fix applies', {
  timeout: 180_000,
}, async () => {
  const { cp, agent } = s;
  const pid = agent.child.pid;
  const good = readFileSync(file, 'utf8');
  // A write cut off half-way: the YAML no longer parses.
  writeFileSync(file, `${good.slice(0, Math.floor(good.length / 2))}\n  - type: [unclosed\n`);
  await waitFor(async () => (await lastOk()) === 0, 30_000, agent.output);
  assert.equal(await failures(), 1);
  kmsg(`${id}: first rule fires`);
  await untilCondition(s, condition, 'True', 30_000);

  rmSync(file);
  await waitFor(async () => (await failures()) === 2, 30_000, agent.output);
  assert.equal(await lastOk(), 0);
  assert.equal(await healthz(agent), 200, 'still healthy on the old config');

  config(s.dir, [temporaryRule('SecondRule', `${id}: second rule fires`)]);
  await waitFor(async () => (await lastOk()) === 1, 30_000, agent.output);
  assert.equal(await metric('npd_config_reloads_total', 'result="success"'), 1);
  kmsg(`${id}: second rule fires`);
  await untilEvent(s, source, 'SecondRule', 30_000);
  const reasons = (await eventsOf(cp, source)).map((e) => e.reason).sort();
  assert.deepEqual(reasons, ['FirstRule', 'SecondRule']);
  assert.equal((await nodeCondition(cp, condition))?.status, 'True', 'the reload kept the condition');
  assert.equal(agent.child.pid, pid, 'no restart');
  assert.equal(agent.child.exitCode, null);
});
