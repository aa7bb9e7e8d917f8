// Custom plugins that hang (with a forked child), flood their output and exit, or flood forever: the
// agent kills each run's whole process group at the timeout, reads at most 4 KiB of output, counts
// every timeout and truncation, keeps the schedule going and leaves no process behind.
import assert from 'node:assert/strict';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';
import {
  faultSuite,
  healthz,
  initialCondition,
  marker,
  metricOf,
  processesMentioning,
  nodeCondition,
  waitFor,
  writeMonitor,
} from './support.ts';

const id = marker('plugin');
const source = `${id}-plugins`;
const MAX_OUTPUT = 80;

function script(dir: string, name: string, body: string): string {
  const file = join(dir, name);
  writeFileSync(file, `#!/bin/sh\n${body}\n`, { mode: 0o755 });
  return file;
}

/** Three permanent rules, one per misbehaving script, each owning one condition. */
function pluginConfig(dir: string): string {
  const scripts = {
    // The hanging plugin forks a copy of itself first, so the kill must reach the whole group.
    Hang: script(dir, 'hang.sh', '[ "$1" = child ] || "$0" child &\nsleep 600'),
    Flood: script(dir, 'flood.sh', 'head -c 10000000 /dev/zero | tr "\\0" x\necho\nexit 1'),
    Forever: script(dir, 'forever.sh', 'exec yes flooding'),
  };
  return writeMonitor(dir, 'plugins.yaml', {
    plugin: 'custom',
    pluginConfig: { invoke_interval: '3s', timeout: '2s', max_output_length: MAX_OUTPUT, concurrency: 3 },
    source,
    conditions: Object.keys(scripts).map((n) => initialCondition(`${n}${id}`, `${n}Fine`)),
    rules: Object.entries(scripts).map(([n, path]) => ({
      type: 'permanent',
      condition: `${n}${id}`,
      reason: `${n}Bad`,
      path,
    })),
  });
}

const s = faultSuite({ kind: 'custom-plugin', configs: (dir) => [pluginConfig(dir)] });

/** Processes still running one of this file's scripts (their command lines name the script's path). */
const leftovers = (): number[] => processesMentioning(s.dir);

test('hanging and flooding plugins are killed, truncated and counted; the agent carries on', {
  timeout: 180_000,
}, async () => {
  const { cp, agent } = s;
  const m = (name: string, ...labels: string[]) => metricOf(agent, name, `source="${source}"`, ...labels);
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

  assert.equal(await healthz(agent), 200);
  assert.equal(agent.child.exitCode, null, 'the agent kept running');
  assert.equal(await agent.stop(), 0);
  // Stopping aborts the runs in flight; no plugin process (nor the hanging one's fork) may survive.
  await waitFor(
    () => leftovers().length === 0,
    10_000,
    () => `left: ${leftovers().join(' ')}`,
  );
});
