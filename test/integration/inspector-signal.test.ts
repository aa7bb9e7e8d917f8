import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';
import { REPO, startAgent, waitFor } from '../support/agent-process.ts';

// Node opens a V8 inspector on 127.0.0.1:9229 on SIGUSR1 by default; in the privileged agent under
// hostNetwork that is a root debugger on the node's loopback. The agent must only log the signal.
test('SIGUSR1 does not open an inspector; the agent logs it and keeps serving', async () => {
  const agent = await startAgent([
    '--enable-k8s-exporter=false',
    `--config.system-log-monitor=${join(REPO, 'rules', 'kernel.yaml')}`,
  ]);
  try {
    agent.child.kill('SIGUSR1');
    await waitFor(async () => /SIGUSR1/.test(agent.output()), 15_000, agent.output);
    assert.doesNotMatch(agent.output(), /Debugger listening/);
    assert.equal((await fetch(`${agent.statusUrl}/healthz`)).status, 200);
  } finally {
    assert.equal(await agent.stop(), 0);
  }
});

test('the image starts Node with --disable-sigusr1', () => {
  const dockerfile = readFileSync(join(REPO, 'Dockerfile'), 'utf8');
  const entry = /^ENTRYPOINT (.*)$/m.exec(dockerfile)?.[1] ?? '';
  assert.deepEqual(JSON.parse(entry), [
    '/usr/bin/tini',
    '--',
    'node',
    '--disable-sigusr1',
    '/app/dist/main.js',
  ]);
});
