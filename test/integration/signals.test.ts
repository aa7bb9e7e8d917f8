// SIGHUP stops the agent as gracefully as SIGTERM (docs/troubleshooting.md): the shutdown path runs
// (queued events flushed within --shutdown-grace-period) and the exit code is 0. Node's default for
// SIGHUP would end the process at once with the signal (exit 129 in a shell).
import assert from 'node:assert/strict';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import { startAgent } from '../support/agent-process.ts';

test('SIGHUP is a graceful stop with exit code 0', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'npd-sighup-'));
  const config = join(dir, 'quiet.yaml');
  writeFileSync(config, 'plugin: kmsg\nsource: sighup-monitor\n');
  const agent = await startAgent([
    '--enable-k8s-exporter=false',
    '--config-reload-period=0',
    `--config.system-log-monitor=${config}`,
  ]);
  const exited = new Promise<{ code: number | null; signal: string | null }>((resolve) =>
    agent.child.once('exit', (code, signal) => resolve({ code, signal })),
  );
  agent.child.kill('SIGHUP');
  const { code, signal } = await exited;
  assert.deepEqual({ code, signal }, { code: 0, signal: null }, agent.output());
  assert.match(agent.output(), /"signal":"SIGHUP".*"msg":"shutting down"/);
  assert.match(agent.output(), /"msg":"stopped"/);
});
