import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import { marker } from '../e2e/support.ts';
import { REPO, startAgent, waitFor } from '../support/agent-process.ts';

function monitorConfig(dir: string, name: string, type: string, aggregate: boolean, pattern: string): string {
  const file = join(dir, `${name}.yaml`);
  writeFileSync(
    file,
    [
      'plugin: kmsg',
      `source: ${name}`,
      'conditions:',
      `  - type: ${type}`,
      `    reason: ${name}OK`,
      '    message: fine',
      ...(aggregate ? ['    aggregate: true'] : []),
      'rules:',
      '  - type: permanent',
      `    condition: ${type}`,
      `    reason: ${name}Problem`,
      `    pattern: '${pattern}'`,
    ].join('\n'),
  );
  return file;
}

test('two configs declaring one condition type are refused unless both opt in to aggregation', () => {
  const dir = mkdtempSync(join(tmpdir(), 'npd-dup-'));
  const a = monitorConfig(dir, 'alpha', 'SharedThing', false, 'alpha broke');
  const b = monitorConfig(dir, 'beta', 'SharedThing', true, 'beta broke');
  const run = spawnSync(
    process.execPath,
    ['--import', 'tsx', join(REPO, 'src/main.ts'), `--config.system-log-monitor=${a},${b}`],
    {
      cwd: REPO,
      encoding: 'utf8',
    },
  );
  assert.equal(run.status, 2);
  assert.match(run.stderr, /alpha\.yaml: conditions\[0\]\.type: condition "SharedThing" is also declared by/);
  assert.doesNotMatch(run.stderr, /beta\.yaml: conditions/);
});

test('with aggregation the worst status wins, whichever monitor spoke last', {
  skip: process.getuid?.() !== 0,
}, async () => {
  const id = marker('agg');
  const dir = mkdtempSync(join(tmpdir(), 'npd-agg-'));
  const type = `Shared${id}`;
  const a = monitorConfig(dir, 'alpha', type, true, `${id} alpha broke`);
  const b = monitorConfig(dir, 'beta', type, true, `${id} beta broke`);
  const agent = await startAgent(['--enable-k8s-exporter=false', `--config.system-log-monitor=${a},${b}`]);
  try {
    const shared = async () => {
      const list = (await (await fetch(`${agent.statusUrl}/conditions`)).json()) as {
        type: string;
        status: string;
        reason: string;
      }[];
      return list.find((c) => c.type === type);
    };
    await waitFor(async () => (await shared())?.status === 'False', 10_000, agent.output);
    assert.equal(
      (await shared())?.reason,
      'alphaOK',
      'among equals, the first source by name supplies the reason',
    );
    const { writeFileSync: w } = await import('node:fs');
    w('/dev/kmsg', `<3>${id} beta broke\n`);
    await waitFor(async () => (await shared())?.reason === 'betaProblem', 10_000, agent.output);
    assert.equal((await shared())?.status, 'True');
  } finally {
    await agent.stop();
  }
});
