// Custom plugins that hang (with a forked child), flood their output and exit, or flood forever: the
// agent kills each run's whole process group at the timeout, reads at most 4 KiB of output, counts
// every timeout and truncation, keeps the schedule going and leaves no process behind.
import assert from 'node:assert/strict';
import { readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, test } from 'node:test';
import { type ControlPlane, startControlPlane } from '../e2e/harness/controlplane.ts';
import {
  type AgentProcess,
  marker,
  nodeCondition,
  scrape,
  startAgent,
  sum,
  waitFor,
  workDir,
  writeConfig,
} from './support.ts';

const id = marker('plugin');
const source = `${id}-plugins`;
const dir = workDir();
const MAX_OUTPUT = 80;

let cp: ControlPlane;
let agent: AgentProcess;

function script(name: string, body: string): string {
  const file = join(dir, name);
  writeFileSync(file, `#!/bin/sh\n${body}\n`, { mode: 0o755 });
  return file;
}

/** Three permanent rules, one per misbehaving script, each owning one condition. */
function pluginConfig(): string {
  // The hanging plugin forks a copy of itself first, so the kill must reach the whole group.
  const hang = script('hang.sh', '[ "$1" = child ] || "$0" child &\nsleep 600');
  const flood = script('flood.sh', 'head -c 10000000 /dev/zero | tr "\\0" x\necho\nexit 1');
  const forever = script('forever.sh', 'exec yes flooding');
  const rule = (name: string, path: string) => [
    '  - type: permanent',
    `    condition: ${name}${id}`,
    `    reason: ${name}Bad`,
    `    path: ${path}`,
  ];
  const condition = (name: string) => [
    `  - type: ${name}${id}`,
    `    reason: ${name}Fine`,
    '    message: fine',
  ];
  return writeConfig(dir, 'plugins.yaml', [
    'plugin: custom',
    'pluginConfig:',
    '  invoke_interval: 3s',
    '  timeout: 2s',
    `  max_output_length: ${MAX_OUTPUT}`,
    '  concurrency: 3',
    `source: ${source}`,
    'conditions:',
    ...condition('Hang'),
    ...condition('Flood'),
    ...condition('Forever'),
    'rules:',
    ...rule('Hang', hang),
    ...rule('Flood', flood),
    ...rule('Forever', forever),
  ]);
}

before(
  async () => {
    cp = await startControlPlane();
    const config = pluginConfig();
    agent = await startAgent(
      [
        `--kubeconfig=${cp.agentKubeconfig}`,
        `--hostname-override=${cp.nodeName}`,
        `--config.custom-plugin-monitor=${config}`,
      ],
      { KUBECONFIG: '' },
    );
  },
  { timeout: 10 * 60_000 },
);

after(async () => {
  if (agent && agent.child.exitCode === null) await agent.stop();
  await cp?.stop();
});

/** Processes still running one of this test's scripts (their command lines name the script's path). */
function leftovers(): number[] {
  const out: number[] = [];
  for (const pid of readdirSync('/proc').filter((d) => /^\d+$/.test(d))) {
    try {
      if (readFileSync(`/proc/${pid}/cmdline`, 'utf8').includes(dir)) out.push(Number(pid));
    } catch {
      // gone
    }
  }
  return out;
}

test('hanging and flooding plugins are killed, truncated and counted; the agent carries on', {
  timeout: 180_000,
}, async () => {
  const m = async (name: string, ...labels: string[]) =>
    sum(await scrape(agent.metricsUrl), name, `source="${source}"`, ...labels);
  // Several rounds, so the schedule is shown to go on after kills and floods.
  await waitFor(async () => (await m('npd_plugin_runs_total', 'rule="FloodBad"')) >= 3, 60_000, agent.output);
  await waitFor(
    async () => (await m('npd_plugin_timeouts_total', 'rule="HangBad"')) >= 3,
    60_000,
    agent.output,
  );
  await waitFor(
    async () => (await m('npd_plugin_timeouts_total', 'rule="ForeverBad"')) >= 3,
    60_000,
    agent.output,
  );
  assert.ok(
    (await m('npd_plugin_output_truncated_total', 'stream="stdout"')) >= 6,
    'flood and forever runs truncated',
  );
  assert.equal(await m('npd_plugin_errors_total', 'reason="abandoned"'), 0, 'every killed group went away');

  const hang = await nodeCondition(cp, `Hang${id}`);
  assert.equal(hang?.status, 'Unknown');
  assert.match(hang?.message ?? '', /^Timeout when running plugin/);
  const flood = await nodeCondition(cp, `Flood${id}`);
  assert.equal(flood?.status, 'True');
  assert.equal(flood?.reason, 'FloodBad');
  assert.equal(flood?.message, 'x'.repeat(MAX_OUTPUT), 'the message is cut to max_output_length');
  const forever = await nodeCondition(cp, `Forever${id}`);
  assert.equal(forever?.status, 'Unknown');
  assert.ok(Buffer.byteLength(forever?.message ?? '') <= MAX_OUTPUT);

  assert.equal((await fetch(`${agent.statusUrl}/healthz`)).status, 200);
  assert.equal(agent.child.exitCode, null, 'the agent kept running');
  assert.equal(await agent.stop(), 0);
  // Stopping aborts the runs in flight; no plugin process (nor the hanging one's fork) may survive.
  await waitFor(
    () => leftovers().length === 0,
    10_000,
    () => `left: ${leftovers().join(' ')}`,
  );
});
