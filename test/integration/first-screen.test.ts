// What an operator sees from the real agent process: the log format `kubectl logs` shows, one warning
// for a klog args list, and a port clash as one line naming the flag.
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { createServer, type Server } from 'node:net';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { freePort, REPO, startAgent } from '../support/agent-process.ts';

const standalone = ['--enable-k8s-exporter=false'];

function records(output: string): Record<string, unknown>[] {
  return output
    .split('\n')
    .filter((l) => l.startsWith('{'))
    .map((l) => JSON.parse(l) as Record<string, unknown>);
}

describe('first screen', () => {
  it('logs JSON with level names and RFC 3339 UTC times off a terminal, one warning for klog flags', async () => {
    const klog = ['--v=2', '--log_dir=/var/log', '--log_file=/x', '--stderrthreshold=2', '--skip_headers'];
    const agent = await startAgent([...standalone, ...klog, '--one_output']);
    const code = await agent.stop();
    assert.equal(code, 0, agent.output());
    const recs = records(agent.output());
    assert.ok(recs.length > 3, agent.output());
    for (const r of recs) {
      assert.match(String(r.level), /^(trace|debug|info|warn|error|fatal)$/);
      assert.match(String(r.time), /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/);
    }
    const warnings = recs.filter((r) => r.level === 'warn' && /NPD compatibility/.test(String(r.msg)));
    assert.equal(warnings.length, 1, 'one warning for the whole klog set');
    assert.deepEqual(warnings[0]?.flags, [
      '--v',
      '--log_dir',
      '--log_file',
      '--skip_headers',
      '--one_output',
      '--stderrthreshold',
    ]);
  });

  it('standalone /readyz says there is nothing to sync', async () => {
    const agent = await startAgent(standalone);
    try {
      const res = await fetch(`${agent.statusUrl}/readyz`);
      assert.equal(res.status, 200);
      assert.equal(await res.text(), 'ok\nstandalone: nothing to sync\n');
    } finally {
      await agent.stop();
    }
  });

  it('the first screen is one summary line, then only conditions that are True or change', async () => {
    const agent = await startAgent(standalone, { LOG_LEVEL: 'info' });
    await agent.stop();
    const recs = records(agent.output());
    const started = recs.filter((r) => String(r.msg).startsWith('agent started'));
    assert.equal(started.length, 1, agent.output());
    const summary = started[0] as Record<string, unknown>;
    // The flag-less default: the DaemonSet's rule set (src/cli.ts DEFAULT_RULES).
    assert.deepEqual(summary.monitors, [
      'kernel-monitor',
      'readonly-monitor',
      'hardware-monitor',
      'storage-monitor',
      'network-monitor',
      'probe-monitor',
    ]);
    assert.ok(Number(summary.conditions) >= 5, String(summary.conditions));
    // The shipped kmsg monitors share one reader; where it starts depends on this host's uptime.
    const kmsg = summary.kmsg as string[];
    assert.equal(kmsg.length, 1, JSON.stringify(kmsg));
    assert.match(
      kmsg[0]!,
      /^kernel-monitor: from (the start of the ring|the lookback: records since \d{4}-)/,
    );
    const listen = summary.listen as string[];
    assert.deepEqual(listen, [
      `status=${new URL(agent.statusUrl).host}`,
      `metrics=${new URL(agent.metricsUrl).host}`,
    ]);
    const conditionLines = recs.filter((r) => r.msg === 'condition');
    assert.ok(
      conditionLines.every((r) => r.status === 'True'),
      'no line per healthy condition',
    );
    // The kernel log's last 5 minutes replay after the summary, so a line there may add a problem;
    // every problem the summary names has its line.
    const logged = new Set(conditionLines.map((r) => r.condition));
    for (const p of summary.problems as string[]) assert.ok(logged.has(p.split('(')[0]), `${p} logged`);
  });

  it('--log-format=text writes one klog-like line per record', async () => {
    const agent = await startAgent([...standalone, '--log-format=text']);
    await agent.stop();
    const lines = agent.output().trim().split('\n');
    assert.ok(lines.length > 2);
    for (const l of lines) assert.match(l, /^[IWEF]\d{4} \d\d:\d\d:\d\d\.\d{6} +\d+ \S+\] "/, l);
  });

  for (const [flag, other] of [
    ['--port', '--prometheus-port'],
    ['--prometheus-port', '--port'],
  ] as const) {
    it(`a ${flag} already in use is one line naming ${flag}, exit 2`, async () => {
      const holder: Server = createServer();
      const taken = await new Promise<number>((r) =>
        holder.listen(0, '127.0.0.1', () => r((holder.address() as { port: number }).port)),
      );
      try {
        const args = [...standalone, `${flag}=${taken}`, `${other}=${await freePort()}`];
        const run = spawnSync(process.execPath, ['--import', 'tsx', join(REPO, 'src', 'main.ts'), ...args], {
          cwd: REPO,
          encoding: 'utf8',
          timeout: 30_000,
        });
        assert.equal(run.status, 2, run.stderr);
        const lines = run.stderr.trim().split('\n');
        assert.equal(lines.length, 1, run.stderr);
        assert.match(
          lines[0] as string,
          new RegExp(`127\\.0\\.0\\.1:${taken}: the port is already in use; change ${flag} `),
        );
      } finally {
        holder.close();
      }
    });
  }
});
