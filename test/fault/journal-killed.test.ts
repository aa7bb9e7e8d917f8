// The journalctl child of a journald monitor dies (SIGKILL, then SIGTERM): the agent notices, counts
// it in npd_journal_restarts_total, starts a new journalctl and stays healthy, without a restart of its
// own. No journald runs on this machine, so the monitor follows an empty journal directory of its own
// (journalctl keeps following an empty directory); the Node keeps the condition the config declares.
import assert from 'node:assert/strict';
import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';
import { childProcesses } from '../bench/proc.ts';
import {
  faultSuite,
  healthz,
  initialCondition,
  markedNames,
  metricOf,
  nodeCondition,
  permanentRule,
  untilCondition,
  waitFor,
  writeMonitor,
} from './support.ts';

const { id, source, condition } = markedNames('journal', 'Journal');

const s = faultSuite({
  configs: (dir) => {
    const journal = join(dir, 'journal');
    mkdirSync(journal);
    const config = writeMonitor(dir, 'journal.yaml', {
      plugin: 'journald',
      logPath: journal,
      pluginConfig: { source: id },
      source,
      conditions: [initialCondition(condition, 'JournalFine')],
      rules: [permanentRule(condition, 'JournalBroke', `${id}: broke`)],
    });
    return [config];
  },
});

function journalctl(): number | undefined {
  const pid = s.agent.child.pid as number;
  return childProcesses(pid).find((c) => c.cmdline[0]?.endsWith('journalctl'))?.pid;
}

const restarts = () => metricOf(s.agent, 'npd_journal_restarts_total', `source="${source}"`);

test('a killed journalctl is restarted and counted; the agent itself keeps running', {
  timeout: 120_000,
}, async () => {
  const { cp, agent } = s;
  await untilCondition(s, condition, 'False', 30_000);
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
    await waitFor(async () => (await healthz(agent)) === 200, 30_000, agent.output);
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
  assert.equal(await metricOf(agent, 'npd_condition_sync_total', 'result="failure"'), 0);
});
