// kubeconfig exec credential plugins that hang (and fork) or print 200 MB, against the real
// kube-apiserver: every request fails at its deadline or at the output cap instead of stalling, each
// failure is counted (credential failures, failed condition syncs), RSS stays bounded, no plugin
// process outlives its run, and a working plugin's token gets the conditions onto the Node.
import assert from 'node:assert/strict';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';
import { parse as parseYaml } from 'yaml';
import {
  type AgentProcess,
  faultSuite,
  healthz,
  initialCondition,
  markedNames,
  metricOf,
  processesMentioning,
  startAgent,
  untilCondition,
  waitFor,
  writeMonitor,
} from './support.ts';

const s = faultSuite();
const V1 = 'client.authentication.k8s.io/v1';

function script(name: string, body: string): string {
  const file = join(s.dir, name);
  writeFileSync(file, `#!/bin/sh\n${body}\n`, { mode: 0o755 });
  return file;
}

/** The agent's kubeconfig with its static token replaced by an exec plugin. */
function execKubeconfig(name: string, command: string): string {
  const doc = parseYaml(readFileSync(s.cp.agentKubeconfig, 'utf8')) as {
    users: { user: Record<string, unknown> }[];
  };
  for (const u of doc.users) u.user = { exec: { apiVersion: V1, command, interactiveMode: 'Never' } };
  const file = join(s.dir, `kubeconfig-${name}.json`);
  writeFileSync(file, JSON.stringify(doc), { mode: 0o600 });
  return file;
}

async function agentWith(
  name: string,
  body: string,
  flags: readonly string[] = [],
): Promise<{ agent: AgentProcess; condition: string }> {
  const { id, source, condition } = markedNames(name);
  const config = writeMonitor(s.dir, `${id}.yaml`, {
    plugin: 'kmsg',
    source,
    conditions: [initialCondition(condition, 'Fine')],
    rules: [],
  });
  const kubeconfig = execKubeconfig(id, script(`${id}.sh`, body));
  const agent = await startAgent(
    [
      `--kubeconfig=${kubeconfig}`,
      `--hostname-override=${s.cp.nodeName}`,
      `--config.system-log-monitor=${config}`,
      '--api-request-timeout=2s',
      ...flags,
    ],
    { KUBECONFIG: '' },
  );
  return { agent, condition };
}

function rssMiB(pid: number): number {
  return Number(/^VmRSS:\s+(\d+) kB$/m.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))?.[1]) / 1024;
}

/** Processes still running one of this file's scripts (their command lines name the script's path). */
const leftovers = (): number[] => processesMentioning(s.dir);

const failures = (agent: AgentProcess, reason: string) =>
  metricOf(agent, 'npd_apiserver_credential_failures_total', `reason="${reason}"`);

const credential = (token: string, expiry: string) =>
  `printf '{"apiVersion":"${V1}","kind":"ExecCredential","status":{"token":"%s","expirationTimestamp":"%s"}}' ${token} ${expiry}`;

test('a hanging exec plugin fails each request at its deadline, counted; no plugin is left', {
  timeout: 120_000,
}, async () => {
  // The first run hands out a token valid for 12 s; every later run hangs, after forking a sleeper,
  // so the kill must reach the whole process group. The token outlives the first condition sync, which
  // waits up to START_JITTER_MS (5 s) after start: with 4 s the sync sometimes came after it expired and
  // the condition never landed (CI of stop 43).
  const first = join(s.dir, 'exhang-first');
  const body = [
    `if [ ! -e ${first} ]; then`,
    `  touch ${first}`,
    `  ${credential(s.cp.agentToken, '$(date -u -d "+12 seconds" +%Y-%m-%dT%H:%M:%SZ)')}`,
    '  exit 0',
    'fi',
    'sleep 600 &',
    'wait',
  ].join('\n');
  const { agent, condition } = await agentWith('exhang', body, ['--k8s-exporter-heartbeat-period=3s']);
  try {
    await untilCondition({ cp: s.cp, agent }, condition, 'False', 60_000);
    await waitFor(async () => (await failures(agent, 'timeout')) >= 3, 60_000, agent.output);
    await waitFor(
      async () => (await metricOf(agent, 'npd_condition_sync_total', 'result="failure"')) >= 1,
      60_000,
      agent.output,
    );
    assert.ok((await metricOf(agent, 'npd_apiserver_requests_total', 'code="error"')) >= 3);
    assert.equal(await healthz(agent), 200);
    // One run at a time, each killed at the 2 s request deadline: at most the current run is alive.
    assert.ok(leftovers().length <= 2, `plugin processes: ${leftovers().join(' ')}`);
  } finally {
    assert.equal(await agent.stop(), 0);
  }
  await waitFor(
    () => leftovers().length === 0,
    10_000,
    () => `left: ${leftovers().join(' ')}`,
  );
});

test('an exec plugin that hangs from the start: Node lookups fail at the deadline, counted', {
  timeout: 120_000,
}, async () => {
  const { agent } = await agentWith('exhang0', 'sleep 600 &\nwait');
  try {
    await waitFor(async () => (await failures(agent, 'timeout')) >= 2, 60_000, agent.output);
    assert.ok((await metricOf(agent, 'npd_node_info_fetch_total', 'result="failure"')) >= 2);
    assert.equal(await healthz(agent), 200);
  } finally {
    assert.equal(await agent.stop(), 0);
  }
});

test('an exec plugin printing 200 MB is killed at the output cap, counted; RSS stays bounded', {
  timeout: 120_000,
}, async () => {
  const { agent } = await agentWith('exflood', 'head -c 200000000 /dev/zero | tr "\\0" x');
  try {
    const pid = agent.child.pid as number;
    const before = rssMiB(pid);
    let peak = before;
    await waitFor(
      async () => {
        peak = Math.max(peak, rssMiB(pid));
        return (await failures(agent, 'output_too_large')) >= 3;
      },
      60_000,
      agent.output,
    );
    process.stdout.write(`# RSS ${before.toFixed(1)} MiB, peak ${peak.toFixed(1)} MiB while plugins flood\n`);
    assert.ok(peak - before < 64, `RSS rose from ${before.toFixed(1)} to ${peak.toFixed(1)} MiB`);
    assert.ok((await metricOf(agent, 'npd_condition_sync_total', 'result="success"')) === 0);
    assert.equal(await healthz(agent), 200);
  } finally {
    assert.equal(await agent.stop(), 0);
  }
});

test('a working exec plugin: its token reaches the real apiserver and the condition lands', {
  timeout: 120_000,
}, async () => {
  const { agent, condition } = await agentWith('exok', credential(s.cp.agentToken, '2999-01-01T00:00:00Z'));
  try {
    await untilCondition({ cp: s.cp, agent }, condition, 'False', 60_000);
    assert.equal(await failures(agent, 'timeout'), 0);
  } finally {
    assert.equal(await agent.stop(), 0);
  }
});
