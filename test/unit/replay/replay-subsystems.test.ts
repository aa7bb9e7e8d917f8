import assert from 'node:assert/strict';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { SubsystemTable } from '../../../src/conditions/subsystem-table.ts';
import { loadConfigs } from '../../../src/config/load.ts';
import { systemLogConfigKind } from '../../../src/monitors/system-log/schema.ts';
import { parseReplayInput } from '../../../src/replay/parse-input.ts';
import { runReplay } from '../../../src/replay/command.ts';
import { type ReplayRecord, replay } from '../../../src/replay/replay.ts';
import type { LogMonitorConfig } from '../../../src/rules/config.ts';

const UNREGISTER = 'unregister_netdevice: waiting for lo to become free. Usage count = 1';
const ROOT = join(import.meta.dirname, '../../..');
const T0 = Date.UTC(2026, 0, 1);
const WINDOW = 10 * 60_000;

/** Replays shipped rule files, every one of them on its own monitor, with subsystem conditions on. */
function run(files: readonly string[], text: string, format: 'kmsg' | 'journal-json', holdMs = 0) {
  const loaded = loadConfigs(
    files.map((f) => ({ file: join(ROOT, 'rules', f) })),
    [systemLogConfigKind],
  );
  const configs = loaded.map((l) => l.config as LogMonitorConfig);
  const subsystems = { table: SubsystemTable.from(loaded), windowMs: WINDOW, holdMs };
  return replay(configs, parseReplayInput(text, format, T0).lines, T0, subsystems);
}

function subsystem(out: readonly ReplayRecord[], type: string): [string | undefined, string, string][] {
  return out
    .filter((r) => r.kind === 'subsystem' && r.type === type)
    .map((r) => [r.status, r.reason, r.timestamp]);
}

/** /dev/kmsg records at the given minutes after boot (T0). */
function kmsg(entries: readonly (readonly [number, string])[]): string {
  return entries.map(([minute, m], i) => `6,${i},${minute * 60_000_000},-;${m}\n`).join('');
}

/** Three hangs in a minute each: kernel.yaml's event and, at the third, kernel-counter.yaml's condition. */
const HANGS = [1, 2, 3].map((minute) => [minute, UNREGISTER] as const);

function journal(messages: readonly string[]): string {
  return messages
    .map((MESSAGE, i) =>
      JSON.stringify({
        __REALTIME_TIMESTAMP: String((T0 + (i + 1) * 60_000) * 1000),
        SYSLOG_IDENTIFIER: 'systemd',
        MESSAGE,
      }),
    )
    .join('\n');
}

const at = (minute: number) => new Date(T0 + minute * 60_000).toISOString().replace('.000Z', 'Z');

const OOM_KILL =
  'Memory cgroup out of memory: Killed process 4242 (python3) total-vm:1234560kB, anon-rss:524288kB, file-rss:10240kB, shmem-rss:0kB, UID:0 pgtables:1200kB oom_score_adj:994';
const KUBELET_START = 'Started kubelet.service - kubelet: The Kubernetes Node Agent.';
const CONTAINERD_START = 'Starting containerd container runtime...';

describe('replay --subsystem-conditions: main and counter files share a source', () => {
  it('keeps NetworkingReady False from kernel-counter.yaml while kernel.yaml reports an OOM kill', () => {
    // kernel.yaml's own UnregisterNetDevice events leave the window at minute 13; the counter's
    // condition (3 in 20 minutes) holds until minute 21. The OOM kill at 15 is a kernel.yaml status.
    const out = run(['kernel.yaml', 'kernel-counter.yaml'], kmsg([...HANGS, [15, OOM_KILL]]), 'kmsg');
    const events = out.filter((r) => r.kind === 'event').map((r) => r.reason);
    assert.ok(events.includes('OOMKilling'), 'the OOM line reached kernel.yaml');
    const net = subsystem(out, 'NetworkingReady');
    assert.deepEqual(net[0], ['False', 'UnregisterNetDevice', at(1)]);
    assert.equal(net[1]?.[0], 'True');
    assert.ok((net[1]?.[2] ?? '') >= at(21), `still False at the OOM kill: ${JSON.stringify(net)}`);
  });

  it('keeps ContainerRuntimeReady False from systemd-counter.yaml while systemd.yaml reports starts', () => {
    const lines = [...Array(5).fill(KUBELET_START), CONTAINERD_START, KUBELET_START];
    const out = run(['systemd.yaml', 'systemd-counter.yaml'], journal(lines), 'journal-json');
    const conditions = out.filter((r) => r.kind === 'condition').map((r) => [r.type, r.status]);
    assert.deepEqual(conditions, [['FrequentKubeletRestart', 'True']]);
    assert.deepEqual(subsystem(out, 'ContainerRuntimeReady'), [['False', 'FrequentKubeletRestart', at(5)]]);
  });

  it('prints the recovery that the window, then the hold, bring after the last line', () => {
    const once = kmsg([[1, UNREGISTER]]);
    assert.deepEqual(subsystem(run(['kernel.yaml'], once, 'kmsg'), 'NetworkingReady'), [
      ['False', 'UnregisterNetDevice', at(1)],
      ['True', 'NetworkingIsHealthy', at(11)],
    ]);
    assert.deepEqual(subsystem(run(['kernel.yaml'], once, 'kmsg', 2 * 60_000), 'NetworkingReady'), [
      ['False', 'UnregisterNetDevice', at(1)],
      ['True', 'NetworkingIsHealthy', at(13)],
    ]);
  });

  it('prints no subsystem records without --subsystem-conditions', () => {
    const loaded = loadConfigs([{ file: join(ROOT, 'rules', 'kernel-counter.yaml') }], [systemLogConfigKind]);
    const lines = parseReplayInput(kmsg(HANGS), 'kmsg', T0).lines;
    const out = replay([loaded[0]?.config as LogMonitorConfig], lines, T0);
    assert.ok(out.some((r) => r.kind === 'condition'));
    assert.ok(!out.some((r) => r.kind === 'subsystem'));
  });
});

describe('replay command: subsystem flags', () => {
  function cli(args: readonly string[]): { code: number; stdout: string; stderr: string } {
    let stdout = '';
    let stderr = '';
    const io = {
      stdout: (t: string) => (stdout += t),
      stderr: (t: string) => (stderr += t),
      readStdin: () => kmsg(HANGS),
    };
    const code = runReplay(['--config', join(ROOT, 'rules/kernel-counter.yaml'), ...args, '-'], io);
    return { code, stdout, stderr };
  }

  it('prints subsystem records with --subsystem-conditions only', () => {
    const on = cli(['--subsystem-conditions', '--subsystem-window=5m', '--subsystem-hold=0s']);
    assert.equal(on.code, 0, on.stderr);
    const kinds = on.stdout
      .trim()
      .split('\n')
      .map((l) => (JSON.parse(l) as ReplayRecord).kind);
    assert.ok(kinds.includes('subsystem'));
    const off = cli([]);
    assert.equal(off.code, 0, off.stderr);
    assert.ok(!off.stdout.includes('"kind":"subsystem"'));
  });

  it('refuses a zero window and an invalid hold, naming the flag', () => {
    const zero = cli(['--subsystem-conditions', '--subsystem-window=0s']);
    assert.equal(zero.code, 2);
    assert.match(zero.stderr, /--subsystem-window must be greater than 0/);
    const bad = cli(['--subsystem-conditions', '--subsystem-hold=soon']);
    assert.equal(bad.code, 2);
    assert.match(bad.stderr, /--subsystem-hold: invalid duration "soon"/);
  });
});
