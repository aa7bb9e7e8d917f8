// A config file is corrupted while hot reload (--config-reload-period=1s) watches it: half-written
// YAML, then the file removed. Each time the running config stays in force (it still detects and
// reports), npd_config_last_reload_successful drops to 0 and the failure is counted; a fixed file
// then applies without a restart. test/e2e/agent-lifecycle.test.ts covers a valid file with an
// invalid regex; this covers files that do not parse or do not exist.
import assert from 'node:assert/strict';
import { readFileSync, rmSync, writeFileSync } from 'node:fs';
import { after, before, test } from 'node:test';
import { type ControlPlane, startControlPlane } from '../e2e/harness/controlplane.ts';
import {
  type AgentProcess,
  agentArgs,
  eventsOf,
  kmsg,
  marker,
  nodeCondition,
  scrape,
  startAgent,
  sum,
  waitFor,
  workDir,
  writeConfig,
} from './support.ts';

const id = marker('reload');
const source = `${id}-monitor`;
const condition = `Reload${id}`;
const dir = workDir();

let cp: ControlPlane;
let agent: AgentProcess;
let file: string;

function config(extraRules: string[] = []): string {
  return writeConfig(dir, 'reload.yaml', [
    'plugin: kmsg',
    `source: ${source}`,
    'conditions:',
    `  - type: ${condition}`,
    '    reason: Fine',
    '    message: fine',
    'rules:',
    '  - type: permanent',
    `    condition: ${condition}`,
    '    reason: FirstRule',
    `    pattern: '${id}: first rule fires'`,
    ...extraRules,
  ]);
}

before(
  async () => {
    cp = await startControlPlane();
    file = config();
    agent = await startAgent(
      [...agentArgs(cp.agentKubeconfig, cp.nodeName, [file]), '--config-reload-period=1s'],
      {
        KUBECONFIG: '',
      },
    );
    await waitFor(async () => (await nodeCondition(cp, condition))?.status === 'False', 30_000, agent.output);
  },
  { timeout: 10 * 60_000 },
);

after(async () => {
  const code = await agent?.stop();
  await cp?.stop({ failed: code !== 0 });
});

const metric = async (name: string, ...labels: string[]) =>
  sum(await scrape(agent.metricsUrl), name, ...labels);
const lastOk = () => metric('npd_config_last_reload_successful');
const failures = () => metric('npd_config_reloads_total', 'result="failure"');

test('a corrupted or missing config is refused, the running one keeps working, a fix applies', {
  timeout: 180_000,
}, async () => {
  const pid = agent.child.pid;
  const good = readFileSync(file, 'utf8');
  // A write cut off half-way: the YAML no longer parses.
  writeFileSync(file, `${good.slice(0, Math.floor(good.length / 2))}\n  - type: [unclosed\n`);
  await waitFor(async () => (await lastOk()) === 0, 30_000, agent.output);
  assert.equal(await failures(), 1);
  kmsg(`${id}: first rule fires`);
  await waitFor(async () => (await nodeCondition(cp, condition))?.status === 'True', 30_000, agent.output);

  rmSync(file);
  await waitFor(async () => (await failures()) === 2, 30_000, agent.output);
  assert.equal(await lastOk(), 0);
  assert.equal((await fetch(`${agent.statusUrl}/healthz`)).status, 200, 'still healthy on the old config');

  config(['  - type: temporary', '    reason: SecondRule', `    pattern: '${id}: second rule fires'`]);
  await waitFor(async () => (await lastOk()) === 1, 30_000, agent.output);
  assert.equal(await metric('npd_config_reloads_total', 'result="success"'), 1);
  kmsg(`${id}: second rule fires`);
  await waitFor(
    async () => (await eventsOf(cp, source)).some((e) => e.reason === 'SecondRule'),
    30_000,
    agent.output,
  );
  const reasons = (await eventsOf(cp, source)).map((e) => e.reason).sort();
  assert.deepEqual(reasons, ['FirstRule', 'SecondRule']);
  assert.equal((await nodeCondition(cp, condition))?.status, 'True', 'the reload kept the condition');
  assert.equal(agent.child.pid, pid, 'no restart');
  assert.equal(agent.child.exitCode, null);
});
