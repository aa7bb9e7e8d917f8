// Issue 39 item 2 on the real agent process: a config declaring a kubelet-owned condition type exits 2
// at start-up naming the file and the field, and a reload to one keeps the running config, says why
// (log line and npd_config_reloads_total{result="failure"}); the same steps with a type of the
// agent's own start and reload. A probe config (fd, from /proc) needs no root and no /dev/kmsg.
import assert from 'node:assert/strict';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { metricValue, runAgentToExit, startAgent, waitFor } from '../support/agent-process.ts';

const dir = mkdtempSync(join(tmpdir(), 'npd-reserved-'));
const esc = (s: string) => s.replaceAll(/[.*+?^${}()|[\]\\/]/g, '\\$&');

/** A probe config whose fd probe reports `type`, declared in conditions. */
function probeConfig(file: string, type: string): string {
  const path = join(dir, file);
  const lines = ['plugin: probe', 'conditions:', `  - {type: ${type}, reason: Fine, message: fine}`];
  writeFileSync(path, [...lines, 'probes:', `  - {kind: fd, condition: ${type}}`, ''].join('\n'));
  return path;
}

async function conditionTypes(statusUrl: string): Promise<string[]> {
  const body = (await (await fetch(`${statusUrl}/conditions`)).json()) as { type: string }[];
  return body.map((c) => c.type).sort();
}

describe('kubelet-owned condition types on the real agent', () => {
  it('a config declaring MemoryPressure exits 2 naming the file and the field', async () => {
    const file = probeConfig('memory.yaml', 'MemoryPressure');
    const { code, stderr } = await runAgentToExit([
      `--config.probe-monitor=${file}`,
      '--enable-k8s-exporter=false',
    ]);
    assert.equal(code, 2, stderr);
    assert.match(stderr, /^invalid configuration:/);
    assert.match(
      stderr,
      new RegExp(`${esc(file)}: conditions\\[0\\]\\.type: condition type "MemoryPressure"`),
    );
    assert.match(
      stderr,
      new RegExp(`${esc(file)}: probes\\[0\\]\\.condition: condition type "MemoryPressure"`),
    );
    assert.doesNotMatch(stderr, /^\s+at /m, 'no stack trace');
  });

  it('a reload to Ready keeps the running config and says why; a reload to an own type applies', async () => {
    const file = probeConfig('reload.yaml', 'MarkerProblem');
    const agent = await startAgent([
      `--config.probe-monitor=${file}`,
      '--enable-k8s-exporter=false',
      '--config-reload-period=1s',
    ]);
    const reloads = (result: string) =>
      metricValue(agent.metricsUrl, `npd_config_reloads_total{result="${result}"}`);
    try {
      await waitFor(async () => (await conditionTypes(agent.statusUrl)).includes('MarkerProblem'), 30_000);
      probeConfig('reload.yaml', 'Ready');
      await waitFor(async () => (await reloads('failure')) === 1, 30_000, agent.output);
      assert.equal(await metricValue(agent.metricsUrl, 'npd_config_last_reload_successful'), 0);
      assert.match(agent.output(), /config reload rejected; keeping the running config/);
      assert.match(agent.output(), new RegExp(`${esc(file)}: conditions\\[0\\]\\.type: condition type`));
      assert.deepEqual(await conditionTypes(agent.statusUrl), ['MarkerProblem'], 'the old config runs');

      probeConfig('reload.yaml', 'OtherProblem');
      await waitFor(async () => (await reloads('success')) === 1, 30_000, agent.output);
      await waitFor(async () => (await conditionTypes(agent.statusUrl)).includes('OtherProblem'), 30_000);
      assert.ok(!(await conditionTypes(agent.statusUrl)).includes('Ready'));
    } finally {
      assert.equal(await agent.stop(), 0, 'SIGTERM exits cleanly');
    }
  });
});
