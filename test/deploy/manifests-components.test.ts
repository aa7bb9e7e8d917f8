// Client-side checks of the opt-in monitor components (deploy/components/{journald,node-probes,gpu}; the gpu
// variants: manifests-gpu.test.ts):
// each renders over deploy/base, adds exactly its monitor configs to the args (parsed with the agent's
// flag parser, which appends a repeated list flag as NPD does), and those files are in the mounted
// ConfigMap. server-dry-run.test.ts has the API server accept each; test/container runs gpu in the image.
//   node --import tsx --test test/deploy/manifests-components.test.ts
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { parseOptions } from '../../src/agent/options.ts';
import {
  agentContainer,
  configMapData,
  type Doc,
  kubectlSkip as skip,
  kubeletArgs,
  kustomizeWith,
  one,
  podSpec,
  renderBase,
} from './support.ts';

const NODE = { 'spec.nodeName': 'n1', 'status.hostIP': '10.0.0.5' };

function monitors(docs: Doc[]): { systemLog: string[]; probe: string[]; gpu: string[] } {
  const parsed = parseOptions(kubeletArgs(agentContainer(one(docs, 'DaemonSet')), NODE), {}, 'host');
  assert.deepEqual(parsed.errors, []);
  const o = parsed.options;
  return { systemLog: [...o.systemLogMonitors], probe: [...o.probeMonitors], gpu: [...o.gpuMonitors] };
}

function assertInConfigMap(docs: Doc[], files: readonly string[]): void {
  const keys = Object.keys(configMapData(docs));
  for (const f of files) assert.ok(keys.includes(f.replace(/^\/config\//, '')), `${f} is in the ConfigMap`);
}

describe('deploy/components: monitor components', { skip }, () => {
  const base = skip ? { systemLog: [], probe: [], gpu: [] } : monitors(renderBase());

  const cases: [string, { systemLog?: string[]; probe?: string[]; gpu?: string[] }][] = [
    ['journald', { systemLog: ['/config/containerd.yaml', '/config/systemd.yaml', '/config/kubelet.yaml'] }],
    ['gpu', { systemLog: ['/config/gpu.yaml'], gpu: ['/config/gpu-nvml.yaml'] }],
    ['node-probes', { probe: ['/config/probes-node.yaml'] }],
  ];
  for (const [name, added] of cases) {
    test(`${name} adds only its monitor configs, which the ConfigMap holds`, () => {
      const docs = kustomizeWith([name]);
      const got = monitors(docs);
      assert.deepEqual(got.systemLog, [...base.systemLog, ...(added.systemLog ?? [])]);
      assert.deepEqual(got.probe, [...base.probe, ...(added.probe ?? [])]);
      assert.deepEqual(got.gpu, [...base.gpu, ...(added.gpu ?? [])]);
      assertInConfigMap(docs, [...got.systemLog, ...got.probe, ...got.gpu]);
    });
  }

  test('node-probes: host network and the D-Bus and containerd socket folders, read-only below --host-root', () => {
    const docs = kustomizeWith(['node-probes']);
    const ds = one(docs, 'DaemonSet');
    const spec = podSpec(ds);
    assert.equal(spec.hostNetwork, true, 'kubelet /healthz listens on the node loopback');
    assert.equal(spec.dnsPolicy, 'ClusterFirstWithHostNet');
    const c = agentContainer(ds);
    // In the node's network namespace 0.0.0.0 is every node address: both listeners bind the node IP.
    const o = parseOptions(kubeletArgs(c, NODE), {}, 'host').options;
    assert.deepEqual([o.address, o.prometheusAddress], ['10.0.0.5', '10.0.0.5']);
    assert.ok(!c.args.some((a) => a.includes('0.0.0.0')), c.args.join(' '));
    const base = parseOptions(kubeletArgs(agentContainer(one(renderBase(), 'DaemonSet')), NODE), {}, 'host');
    assert.equal(base.options.address, '0.0.0.0', 'control: the pod-network base binds its pod IP');
    // The folders, not the socket files: a restarted containerd or dbus-daemon makes a new socket, which
    // a bind mount of the old file never sees (test/node: the CRI probe stayed failed after a restart).
    for (const path of ['/run/dbus', '/run/containerd']) {
      const v = spec.volumes.find((x) => x.hostPath?.path === path);
      assert.deepEqual(v?.hostPath, { path, type: 'DirectoryOrCreate' });
      const m = c.volumeMounts.find((x) => x.name === v?.name);
      assert.deepEqual(m, { name: v?.name, mountPath: `/host${path}`, readOnly: true });
    }
  });

  test('extra-conditions turns on --extra-conditions and changes nothing else', () => {
    const args = (docs: Doc[]) => kubeletArgs(agentContainer(one(docs, 'DaemonSet')), NODE);
    const base = args(renderBase());
    const extra = args(kustomizeWith(['extra-conditions']));
    assert.equal(parseOptions(base, {}, 'host').options.extraConditions, false, 'control: off in the base');
    const parsed = parseOptions(extra, {}, 'host');
    assert.deepEqual(parsed.errors, []);
    assert.equal(parsed.options.extraConditions, true);
    assert.deepEqual(extra, [...base, '--extra-conditions=true']);
  });

  test('pstore mounts the host /sys/fs/pstore read-only where the agent reads it, and nothing else', () => {
    const base = one(renderBase(), 'DaemonSet');
    const ds = one(kustomizeWith(['pstore']), 'DaemonSet');
    const spec = podSpec(ds);
    const c = agentContainer(ds);
    const v = spec.volumes.find((x) => x.hostPath?.path === '/sys/fs/pstore');
    // Directory: the kernel creates it only with pstore; DirectoryOrCreate cannot create it in sysfs.
    assert.deepEqual(v?.hostPath, { path: '/sys/fs/pstore', type: 'Directory' });
    assert.deepEqual(
      c.volumeMounts.find((m) => m.name === v?.name),
      { name: 'pstore', mountPath: '/host/sys/fs/pstore', readOnly: true },
      'below --host-root=/host, where crash-report reads <host-root>/sys/fs/pstore',
    );
    assert.ok(!podSpec(base).volumes.some((x) => x.name === 'pstore'), 'control: not in the base');
    assert.deepEqual(c.args, agentContainer(base).args);
    assert.equal(spec.volumes.length, podSpec(base).volumes.length + 1);
  });

  test('all three together keep every monitor of each', () => {
    const got = monitors(kustomizeWith(['journald', 'node-probes', 'gpu']));
    assert.equal(new Set(got.systemLog).size, got.systemLog.length, 'no config twice');
    assert.equal(got.systemLog.length, base.systemLog.length + 4);
    assert.equal(got.probe.length, base.probe.length + 1);
    assert.deepEqual(got.gpu, ['/config/gpu-nvml.yaml']);
  });
});
