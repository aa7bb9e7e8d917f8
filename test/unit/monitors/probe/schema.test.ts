import assert from 'node:assert/strict';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { monitorTypes } from '../../../../src/agent/registry.ts';
import { type LoadedConfig, loadConfigs } from '../../../../src/config/load.ts';
import type { NtpOptions } from '../../../../src/monitors/probe/ntp.ts';
import { type ProbeMonitorConfig, validateProbeMonitor } from '../../../../src/monitors/probe/schema.ts';

const RULES = join(import.meta.dirname, '../../../../rules');

function issues(raw: Record<string, unknown>): string[] {
  return validateProbeMonitor({ plugin: 'probe', ...raw }, 'p.yaml').issues.map(
    (i) => `${i.file}: ${i.path}: ${i.message}`,
  );
}

describe('probe-monitor schema', () => {
  it('applies defaults and declares each kind default condition', () => {
    const { config, issues: found } = validateProbeMonitor(
      { plugin: 'probe', probes: [{ kind: 'fd' }, { kind: 'kubelet' }] },
      'p.yaml',
    );
    assert.deepEqual(found, []);
    assert.equal(config?.source, 'probe-monitor');
    assert.equal(config?.splayMs, 0);
    assert.deepEqual(
      config?.probes.map((p) => [p.name, p.intervalMs, p.timeoutMs, p.condition, p.reason]),
      [
        ['fd', 30_000, 5_000, 'FileHandlesLow', 'FileHandlesNearLimit'],
        ['kubelet', 30_000, 5_000, 'KubeletUnhealthy', 'KubeletUnhealthy'],
      ],
    );
    assert.deepEqual(config?.conditions, [
      {
        type: 'FileHandlesLow',
        reason: 'FileHandlesAvailable',
        message: 'file handles are below the limit',
      },
      {
        type: 'KubeletUnhealthy',
        reason: 'KubeletIsHealthy',
        message: 'kubelet on the node is functioning properly',
      },
    ]);
    assert.ok(Object.isFrozen(config?.probes[0]?.options));
  });

  it('reports every problem with its file and field, in the probe kind options too', () => {
    assert.deepEqual(
      issues({
        interval: 'soon',
        extra: 1,
        probes: [
          { kind: 'fd', percent: 120, bogus: true },
          { kind: 'nope' },
          { kind: 'disk', paths: ['relative'] },
          { kind: 'kubelet', requestTimeout: '10s' },
          { kind: 'systemd' },
          { kind: 'fd', failureThreshold: 0, timeout: '1x' },
        ],
      }),
      [
        'p.yaml: interval: invalid duration "soon": use Go syntax such as 30s, 5m or 1h30m',
        'p.yaml: extra: unknown key',
        'p.yaml: probes[0].percent: Too big: expected number to be <=100',
        'p.yaml: probes[0].bogus: unknown key',
        'p.yaml: probes[1].kind: unknown probe kind "nope"; one of: systemd, containerd, kubelet, ntp, fd, pids, conntrack, disk, inodes, readonly-root, inotify, psi, interfaces, default-route, sysctl, nic-counters, dns, apiserver',
        'p.yaml: probes[2].paths[0]: must be an absolute path',
        'p.yaml: probes[3].requestTimeout: must be shorter than the probe timeout (5000ms)',
        'p.yaml: probes[4].unit: Invalid input: expected string, received undefined',
        'p.yaml: probes[5].timeout: invalid duration "1x": use Go syntax such as 30s, 5m or 1h30m',
        'p.yaml: probes[5].failureThreshold: Too small: expected number to be >=1',
      ],
    );
  });

  it('requires custom conditions to be declared, distinct names, and no condition on temporary probes', () => {
    assert.deepEqual(
      issues({
        conditions: [
          { type: 'A', reason: 'AOk', message: '' },
          { type: 'A', reason: 'AOk', message: '' },
        ],
        probes: [
          { kind: 'fd', condition: 'Undeclared' },
          { kind: 'fd', condition: 'A' },
          { kind: 'pids', type: 'temporary', condition: 'A' },
        ],
      }),
      [
        'p.yaml: probes[2].condition: a temporary probe reports events, not a condition',
        'p.yaml: probes[1].name: probe name "fd" is used twice; give each probe a distinct name',
        'p.yaml: conditions[1].type: condition "A" is declared twice',
        'p.yaml: probes[0].condition: condition "Undeclared" is not declared in conditions',
      ],
    );
    assert.deepEqual(issues({ probes: [] }), ['p.yaml: probes: Too small: expected array to have >=1 items']);
  });

  it('drops disabled probes without declaring their default conditions', () => {
    const { config } = validateProbeMonitor(
      { plugin: 'probe', probes: [{ kind: 'fd' }, { kind: 'ntp', enabled: false }] },
      'p.yaml',
    );
    assert.deepEqual(
      config?.probes.map((p) => p.kind),
      ['fd'],
    );
    assert.deepEqual(
      config?.conditions.map((c) => c.type),
      ['FileHandlesLow'],
    );
  });
});

describe('shipped probe configs', () => {
  const kinds = monitorTypes().map((t) => t.configKind);
  const load = (file: string) =>
    loadConfigs(
      [{ file: join(RULES, file), kind: 'probe-monitor' }],
      kinds,
    )[0] as LoadedConfig<ProbeMonitorConfig>;

  it('rules/probes.yaml runs only probes that need nothing but /proc and /', () => {
    const c = load('probes.yaml').config;
    assert.deepEqual(
      c.probes.map((p) => p.kind),
      ['fd', 'pids', 'conntrack', 'readonly-root', 'disk', 'inodes'],
    );
    assert.equal(c.splayMs, 10_000);
  });

  it('rules/probes-node.yaml checks kubelet, containerd and the clock with NPD condition names', () => {
    const c = load('probes-node.yaml').config;
    assert.equal(c.source, 'health-checker');
    assert.deepEqual(
      c.probes.map((p) => p.name),
      ['kubelet', 'systemd:kubelet.service', 'containerd', 'systemd:containerd.service', 'ntp'],
    );
    assert.deepEqual(
      c.conditions.map((x) => x.type),
      [
        'KubeletUnhealthy',
        'ContainerRuntimeUnhealthy',
        'FrequentKubeletRestart',
        'FrequentContainerdRestart',
        'NTPProblem',
      ],
    );
  });

  it('rules/probes-node.yaml reads the clock from the kernel only: no SNTP server, no network', () => {
    const ntp = load('probes-node.yaml').config.probes.find((p) => p.name === 'ntp');
    assert.ok(ntp);
    const options = ntp.options as NtpOptions;
    assert.deepEqual(
      { adjtimex: options.adjtimex, sntp: options.sntp, failureThreshold: ntp.failureThreshold },
      { adjtimex: true, sntp: undefined, failureThreshold: 3 },
    );
  });
});
