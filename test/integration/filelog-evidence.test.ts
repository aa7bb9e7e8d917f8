// Issue 38, evidence levels, on the real agent process: a YAML filelog config whose rule raises a
// condition exits 2 at start-up naming the file and the rule (a log file records no writer), and a
// reload to one keeps the running config and says why; the same file with `trustedWriter: any` then
// reloads, and a line appended to the followed file raises its condition (the control).
import assert from 'node:assert/strict';
import { appendFileSync, mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { stringify } from 'yaml';
import { metricValue, runAgentToExit, startAgent, waitFor } from '../support/agent-process.ts';

const dir = mkdtempSync(join(tmpdir(), 'npd-filelog-evidence-'));
const log = join(dir, 'app.log');
writeFileSync(log, '');
const esc = (s: string) => s.replaceAll(/[.*+?^${}()|[\]\\/]/g, '\\$&');

/** A filelog config declaring `type`, raised by an `app down` line; `extra` adds file fields. */
function fileConfig(name: string, type: string, extra: Record<string, unknown> = {}): string {
  const path = join(dir, name);
  const config = {
    plugin: 'filelog',
    logPath: log,
    source: 'app-monitor',
    pluginConfig: {
      timestamp: '^(\\S+)',
      message: '^\\S+ (.*)',
      timestampFormat: '2006-01-02T15:04:05.999999999Z07:00',
    },
    lookback: '0s',
    ...extra,
    conditions: [{ type, reason: 'AppFine', message: 'app is fine' }],
    rules: [{ type: 'permanent', condition: type, reason: 'AppDown', pattern: 'app down' }],
  };
  writeFileSync(path, stringify(config));
  return path;
}

async function conditions(statusUrl: string): Promise<{ type: string; status: string }[]> {
  return (await (await fetch(`${statusUrl}/conditions`)).json()) as { type: string; status: string }[];
}

describe('a filelog config whose rule raises a condition, on the real agent', () => {
  it('exits 2 naming the file and the rule', async () => {
    const file = fileConfig('refused.yaml', 'AppBroken');
    const { code, stderr } = await runAgentToExit([
      `--config.system-log-monitor=${file}`,
      '--enable-k8s-exporter=false',
    ]);
    assert.equal(code, 2, stderr);
    assert.match(stderr, new RegExp(`${esc(file)}: rules\\[0\\]: rule AppDown raises condition AppBroken, `));
    assert.doesNotMatch(stderr, /^\s+at /m, 'no stack trace');
  });

  it('a reload to it keeps the running config; with trustedWriter: any it applies and raises', async () => {
    const file = fileConfig('reload.yaml', 'AppBroken', { trustedWriter: 'any' });
    const agent = await startAgent([
      `--config.system-log-monitor=${file}`,
      '--enable-k8s-exporter=false',
      '--config-reload-period=1s',
    ]);
    const reloads = (result: string) =>
      metricValue(agent.metricsUrl, `npd_config_reloads_total{result="${result}"}`);
    const types = async () => (await conditions(agent.statusUrl)).map((c) => c.type);
    try {
      await waitFor(async () => (await types()).includes('AppBroken'), 30_000);
      fileConfig('reload.yaml', 'AppOther');
      await waitFor(async () => (await reloads('failure')) === 1, 30_000, agent.output);
      assert.match(agent.output(), /config reload rejected; keeping the running config/);
      assert.match(
        agent.output(),
        new RegExp(`${esc(file)}: rules\\[0\\]: rule AppDown raises condition AppOther`),
      );
      assert.deepEqual(await types(), ['AppBroken'], 'the old config runs');

      fileConfig('reload.yaml', 'AppOther', { trustedWriter: 'any' });
      await waitFor(async () => (await reloads('success')) === 1, 30_000, agent.output);
      // Stamped to the millisecond: a line stamped before the reader's start would be dropped as old.
      appendFileSync(log, `${new Date().toISOString()} app down\n`);
      const raised = async () => (await conditions(agent.statusUrl)).find((c) => c.type === 'AppOther');
      await waitFor(async () => (await raised())?.status === 'True', 30_000, agent.output);
    } finally {
      assert.equal(await agent.stop(), 0, 'SIGTERM exits cleanly');
    }
  });
});
