// The journalctl child of a journald monitor dies (SIGKILL, then SIGTERM): the agent notices, counts
// it in npd_journal_restarts_total, starts a new journalctl and stays healthy, without a restart of its
// own. No journald runs on this machine, so the monitor follows an empty journal directory of its own
// (journalctl keeps following an empty directory); the Node keeps the condition the config declares.
import assert from 'node:assert/strict';
import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, test } from 'node:test';
import { childProcesses } from '../bench/proc.ts';
import { type ControlPlane, startControlPlane } from '../e2e/harness/controlplane.ts';
import {
  type AgentProcess,
  agentArgs,
  marker,
  nodeCondition,
  scrape,
  startAgent,
  sum,
  waitFor,
  workDir,
  writeConfig,
} from './support.ts';

const id = marker('journal');
const source = `${id}-monitor`;
const condition = `Journal${id}`;

let cp: ControlPlane;
let agent: AgentProcess;

before(
  async () => {
    cp = await startControlPlane();
    const dir = workDir();
    const journal = join(dir, 'journal');
    mkdirSync(journal);
    const config = writeConfig(dir, 'journal.yaml', [
      'plugin: journald',
      `logPath: ${journal}`,
      'pluginConfig:',
      `  source: ${id}`,
      `source: ${source}`,
      'conditions:',
      `  - type: ${condition}`,
      '    reason: JournalFine',
      '    message: fine',
      'rules:',
      '  - type: permanent',
      `    condition: ${condition}`,
      '    reason: JournalBroke',
      `    pattern: '${id}: broke'`,
    ]);
    agent = await startAgent(agentArgs(cp.agentKubeconfig, cp.nodeName, [config]), { KUBECONFIG: '' });
  },
  { timeout: 10 * 60_000 },
);

after(async () => {
  const code = await agent?.stop();
  await cp?.stop({ failed: code !== 0 });
});

function journalctl(): number | undefined {
  const pid = agent.child.pid as number;
  return childProcesses(pid).find((c) => c.cmdline[0]?.endsWith('journalctl'))?.pid;
}

const restarts = async () =>
  sum(await scrape(agent.metricsUrl), 'npd_journal_restarts_total', `source="${source}"`);

test('a killed journalctl is restarted and counted; the agent itself keeps running', {
  timeout: 120_000,
}, async () => {
  await waitFor(async () => (await nodeCondition(cp, condition))?.status === 'False', 30_000, agent.output);
  await waitFor(() => journalctl() !== undefined, 30_000, agent.output);
  const agentPid = agent.child.pid;
  const before = await restarts();
  let previous = journalctl() as number;
  for (const [n, signal] of [
    [1, 'SIGKILL'],
    [2, 'SIGTERM'],
  ] as const) {
    process.kill(previous, signal);
    await waitFor(async () => (await restarts()) === before + n, 30_000, agent.output);
    await waitFor(() => (journalctl() ?? previous) !== previous, 30_000, agent.output);
    previous = journalctl() as number;
    await waitFor(
      async () => (await fetch(`${agent.statusUrl}/healthz`)).status === 200,
      30_000,
      agent.output,
    );
  }
  assert.equal(await restarts(), before + 2, 'one restart counted per death');
  assert.equal(agent.child.pid, agentPid);
  assert.equal(agent.child.exitCode, null, 'the agent kept running');
  assert.match(agent.output(), /journal reader down; retrying/);
  assert.equal(
    (await nodeCondition(cp, condition))?.status,
    'False',
    'the Node still shows the declared state',
  );
  assert.equal(sum(await scrape(agent.metricsUrl), 'npd_condition_sync_total', 'result="failure"'), 0);
});
