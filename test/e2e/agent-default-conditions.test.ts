// Which conditions reach the Node by default (docs/consumers.md "Default conditions"), proven with the
// real kube-apiserver and the real kubectl: the flag-less agent (the DaemonSet's rule set) writes the
// latching problem conditions, keeps the threshold and flapping ones as metrics and events, and
// --extra-conditions is the one switch that adds them; switching back deletes their rows.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { EXTRA_CONDITIONS } from '../../src/conditions/extra.ts';
import { type ControlPlane, startControlPlane } from './harness/controlplane.ts';
import {
  type AgentProcess,
  metricValue,
  nodeConditions,
  startAgent,
  waitFor,
  workDir,
  writeConfig,
} from './support.ts';

/** The DaemonSet's default rows: NPD's kernel and read-only conditions and the latching hardware ones. */
const DEFAULT_ROWS = [
  'CperHardwareErrorFatal',
  'KernelDeadlock',
  'KernelOops',
  'NVMeControllerFailed',
  'ReadonlyFilesystem',
  'StorageDeviceOffline',
  'UncorrectableHardwareError',
  'XfsShutdown',
];

describe('default conditions on a real API server', () => {
  let cp: ControlPlane;

  before(
    async () => {
      cp = await startControlPlane();
    },
    { timeout: 60 * 60_000 },
  );

  after(async () => {
    await cp?.stop();
  });

  /** Without a --config.* flag the agent runs the DaemonSet's rules (src/cli.ts DEFAULT_RULES). */
  function agent(extra: string[] = []): Promise<AgentProcess> {
    return startAgent(
      [`--kubeconfig=${cp.agentKubeconfig}`, `--hostname-override=${cp.nodeName}`, ...extra],
      {
        KUBECONFIG: '',
      },
    );
  }

  async function ours(): Promise<string[]> {
    const kubelet = new Set(['Ready', 'MemoryPressure', 'DiskPressure', 'PIDPressure', 'NetworkUnavailable']);
    return (await nodeConditions(cp))
      .map((c) => c.type)
      .filter((t) => !kubelet.has(t))
      .sort();
  }

  test('--extra-conditions adds the extra rows; without it they are deleted and stay metrics', {
    timeout: 180_000,
  }, async () => {
    const withExtra = await agent(['--extra-conditions=true']);
    const all = [...DEFAULT_ROWS, ...EXTRA_CONDITIONS].sort();
    try {
      await waitFor(async () => (await ours()).length === all.length, 60_000, withExtra.output);
      assert.deepEqual(await ours(), all, 'control: the switch publishes every shipped condition');
    } finally {
      assert.equal(await withExtra.stop(), 0);
    }
    const plain = await agent();
    try {
      await waitFor(async () => (await ours()).length === DEFAULT_ROWS.length, 60_000, plain.output);
      assert.deepEqual(await ours(), DEFAULT_ROWS);
      const described = await cp.kubectl(['describe', 'node', cp.nodeName]);
      for (const t of DEFAULT_ROWS) assert.match(described, new RegExp(`^\\s+${t}\\s+(True|False)\\s`, 'm'));
      for (const t of EXTRA_CONDITIONS) assert.doesNotMatch(described, new RegExp(`\\b${t}\\b`));
      // Still measured: the gauge of an unpublished condition is there, at 0 on this healthy host.
      const gauge = 'problem_gauge{type="FileHandlesLow",reason="FileHandlesNearLimit"}';
      assert.equal(await metricValue(plain.metricsUrl, gauge), 0, plain.output());
    } finally {
      assert.equal(await plain.stop(), 0);
    }
  });

  test('an extra condition turning True is a Warning event and a gauge, not a row', {
    timeout: 120_000,
  }, async () => {
    // percent 0: every file system is "near full", so the probe reports a problem at once.
    const probes = writeConfig(workDir(), 'full.yaml', [
      'plugin: probe',
      'source: probe-monitor',
      'interval: 1s',
      'conditions: []',
      'probes:',
      '  - kind: disk',
      '    paths: [/]',
      '    percent: 0',
    ]);
    const running = await agent([`--config.probe-monitor=${probes}`]);
    try {
      const gauge = 'problem_gauge{type="FilesystemSpaceLow",reason="FilesystemNearFull"}';
      await waitFor(async () => (await metricValue(running.metricsUrl, gauge)) === 1, 30_000, running.output);
      await waitFor(
        async () =>
          /Warning\s+FilesystemNearFull\s/.test(await cp.kubectl(['events', '--for', `node/${cp.nodeName}`])),
        30_000,
        running.output,
      );
      assert.ok(!(await ours()).includes('FilesystemSpaceLow'), 'no FilesystemSpaceLow row');
    } finally {
      assert.equal(await running.stop(), 0);
    }
  });
});
