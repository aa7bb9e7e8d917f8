// The DaemonSet's pod reproduced with a mount namespace and setpriv (test/deploy/sandbox.ts): with
// exactly the pod's capabilities (privileged: all of them) every configured monitor and probe works,
// and SYSLOG is the one that reads /dev/kmsg (when kernel.dmesg_restrict=1). Needs root, unshare, setpriv and kubectl; skipped otherwise.
//   node --import tsx --test test/deploy/pod-sandbox-monitors.test.ts
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { stringify } from 'yaml';
import { metricValue } from '../support/agent-process.ts';
import {
  dmesgRestricted,
  enabledProbes,
  type Pod,
  prepareSandbox,
  type Running,
  runAgentInSandbox,
  sandboxSkip,
  waitForMetric,
} from './sandbox.ts';

/** A kmsg monitor config (source `marker`) with a temporary rule of `reason`; returns its path. */
function writeMarkerConfig(sandbox: string, marker: string, reason: string): string {
  const file = join(sandbox, 'config', `${marker}.yaml`);
  const rule = { type: 'temporary', reason, pattern: `${marker}: test line \\d+` };
  writeFileSync(file, stringify({ plugin: 'kmsg', source: marker, rules: [rule] }));
  return file;
}

/** Every enabled built-in probe ran (first runs are splayed) and reached a verdict with the pod's mounts. */
async function assertProbesRan(agent: Running, pod: Pod): Promise<void> {
  for (const [source, probe] of enabledProbes(pod)) {
    const series = `{source="${source}",probe="${probe}"}`;
    await waitForMetric(agent, `npd_probe_duration_seconds_count${series}`, (v) => (v ?? 0) >= 1, 30_000);
    assert.equal(
      await metricValue(agent.metricsUrl, `npd_probe_errors_total${series}`),
      0,
      `${probe} errors`,
    );
  }
}

const skip = sandboxSkip();

describe('the DaemonSet pod, reproduced with a mount namespace and setpriv: monitors', { skip }, () => {
  let pod: Pod;
  let sandbox: string;
  let monitors: string[];

  before(() => {
    ({ pod, sandbox, monitors } = prepareSandbox());
  });

  after(() => {
    if (sandbox) rmSync(sandbox, { recursive: true, force: true });
  });

  test('with only the pod capabilities every configured monitor is healthy and detects a kernel line', async () => {
    const marker = `npdpod${randomBytes(5).toString('hex')}`;
    const reason = `Marker${marker}`;
    const markerConfig = writeMarkerConfig(sandbox, marker, reason);
    const agent = await runAgentInSandbox(pod, sandbox, pod.caps.add, markerConfig);
    try {
      for (const source of [...monitors, marker])
        await waitForMetric(agent, `npd_monitor_healthy{source="${source}"}`, (v) => v === 1);
      const health = await fetch(`${agent.statusUrl}/healthz`);
      assert.equal(health.status, 200, await health.text());
      writeFileSync('/dev/kmsg', `${marker}: test line 42\n`);
      await waitForMetric(agent, `problem_counter{reason="${reason}"}`, (v) => v === 1);
      await assertProbesRan(agent, pod);
    } finally {
      await agent.stop();
    }
  });

  test('without SYSLOG the kernel monitors cannot read /dev/kmsg (kernel.dmesg_restrict=1)', {
    skip: dmesgRestricted() ? false : 'kernel.dmesg_restrict is 0 here',
  }, async () => {
    const caps = [...pod.caps.add, '-SYSLOG'];
    const agent = await runAgentInSandbox(pod, sandbox, caps);
    try {
      await waitForMetric(agent, 'npd_monitor_healthy{source="kernel-monitor"}', (v) => v === 0);
    } finally {
      await agent.stop();
    }
  });
});
