import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import { kmsgWritable, metricValue, REPO, startAgent, waitFor } from '../support/agent-process.ts';

test('standalone agent counts a marked kernel line written to the real /dev/kmsg', {
  skip: !kmsgWritable(),
}, async () => {
  const marker = `npdtest${randomBytes(6).toString('hex')}`;
  const reason = `Marker${marker}`;
  const dir = mkdtempSync(join(tmpdir(), 'npd-standalone-'));
  const config = join(dir, 'marker.yaml');
  writeFileSync(
    config,
    [
      'plugin: kmsg',
      'source: marker-monitor',
      'rules:',
      '  - type: temporary',
      `    reason: ${reason}`,
      `    pattern: '${marker}: disk on fire at sector \\d+'`,
    ].join('\n'),
  );
  const agent = await startAgent([
    '--enable-k8s-exporter=false',
    `--config.system-log-monitor=${join(REPO, 'rules', 'kernel.yaml')},${config}`,
  ]);
  try {
    const series = `problem_counter{reason="${reason}"}`;
    assert.equal(await metricValue(agent.metricsUrl, series), 0, 'pre-initialised to 0 like NPD');
    writeFileSync('/dev/kmsg', `<3>${marker}: disk on fire at sector 42\n`);
    writeFileSync('/dev/kmsg', `<3>${marker}: disk on fire at sector 42 but not really\n`);
    await waitFor(async () => (await metricValue(agent.metricsUrl, series)) === 1, 15_000, agent.output);
    const rss = (await metricValue(agent.metricsUrl, 'process_resident_memory_bytes')) ?? 0;
    assert.ok(rss > 10 * 1024 * 1024, `process_resident_memory_bytes is the agent's RSS (got ${rss})`);
    assert.ok(((await metricValue(agent.metricsUrl, 'process_cpu_seconds_total')) ?? 0) > 0, 'CPU time');
    const health = await fetch(`${agent.statusUrl}/healthz`);
    assert.equal(health.status, 200);
    assert.match(agent.output(), new RegExp(`"reason":"${reason}"`), 'the event is logged');
  } finally {
    assert.equal(await agent.stop(), 0, 'SIGTERM exits cleanly');
  }
});

test('a bad config exits 2 naming the file and field', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'npd-badconfig-'));
  const config = join(dir, 'bad.yaml');
  writeFileSync(
    config,
    [
      'plugin: kmsg',
      'bogus: 1',
      'rules:',
      '  - type: permanent',
      '    reason: X',
      "    pattern: '(unclosed'",
    ].join('\n'),
  );
  const { spawnSync } = await import('node:child_process');
  const run = spawnSync(
    process.execPath,
    ['--import', 'tsx', join(REPO, 'src', 'main.ts'), `--config.system-log-monitor=${config}`],
    {
      cwd: REPO,
      encoding: 'utf8',
    },
  );
  assert.equal(run.status, 2);
  assert.match(run.stderr, new RegExp(`${config.replaceAll('/', '\\/')}: bogus: unknown key`));
  assert.match(run.stderr, /rules\[0\]\.pattern: invalid regex/);
  assert.match(run.stderr, /rules\[0\]\.condition: a permanent rule needs a condition/);
});
