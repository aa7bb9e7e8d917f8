import assert from 'node:assert/strict';
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
