// Client-side checks of the DaemonSet in deploy/base: pod-level settings, the container's security
// context, host mounts, args (parsed with the agent's own flag parser), probes, ports and resources agree
// with each other and with the agent.
//   node --import tsx --test test/deploy/manifests-daemonset.test.ts
import assert from 'node:assert/strict';
import { basename } from 'node:path';
import { describe, test } from 'node:test';
import { parseOptions } from '../../src/agent/options.ts';
import { DEFAULT_RULES } from '../../src/cli.ts';
import { hostPaths as agentPaths } from '../../src/host/paths.ts';
import {
  agentContainer,
  configMapData,
  type Doc,
  get,
  type Obj,
  one,
  podSpec,
  renderBase,
  kubectlSkip as skip,
} from './support.ts';

/** A memory quantity in Mi. */
const mi = (q: string): number => {
  const m = /^(\d+)(Mi|Gi)$/.exec(q);
  assert.ok(m, `memory quantity ${q}`);
  return Number(m[1]) * (m[2] === 'Gi' ? 1024 : 1);
};
/** A CPU quantity in millicores. */
const milli = (q: string): number => (q.endsWith('m') ? Number(q.slice(0, -1)) : Number(q) * 1000);

/** The monitor config files in the args are keys of the ConfigMaps, mounted at /config. */
function assertMonitorConfigsMounted(base: Doc[], files: readonly string[]): void {
  const ds = one(base, 'DaemonSet');
  const configMount = agentContainer(ds).volumeMounts.find(
    (m) => m.name === podSpec(ds).volumes.find((v) => v.projected)?.name,
  );
  assert.equal(configMount?.mountPath, '/config');
  assert.ok(files.length > 0, 'at least one monitor config');
  const keys = Object.keys(configMapData(base));
  for (const f of files) {
    assert.ok(f.startsWith('/config/'), `${f} comes from a ConfigMap`);
    assert.ok(keys.includes(f.slice('/config/'.length)), `${f} is a key of the mounted ConfigMaps`);
  }
}

describe('deploy/ kustomize: DaemonSet', { skip }, () => {
  const base = skip ? [] : renderBase();

  test('DaemonSet: pod-level settings', () => {
    const ds = one(base, 'DaemonSet');
    const spec = podSpec(ds);
    assert.deepEqual(get(ds, 'spec.updateStrategy'), {
      type: 'RollingUpdate',
      rollingUpdate: { maxUnavailable: '10%' },
    });
    assert.equal(spec.priorityClassName, 'system-node-critical');
    assert.deepEqual(spec.tolerations, [{ operator: 'Exists' }]);
    assert.deepEqual(spec.nodeSelector, { 'kubernetes.io/os': 'linux' });
    for (const k of ['hostNetwork', 'hostPID', 'hostIPC', 'shareProcessNamespace'])
      assert.ok(!spec[k], `${k} must be off`);
    assert.deepEqual(get(spec, 'securityContext.seccompProfile'), { type: 'RuntimeDefault' });
    const labels = get(ds, 'spec.template.metadata.labels') as Record<string, string>;
    for (const [k, v] of Object.entries(get(ds, 'spec.selector.matchLabels') as Record<string, string>)) {
      assert.equal(labels[k], v, `pod template carries selector label ${k}`);
    }
    assert.equal(
      get(ds, 'spec.template.metadata.annotations')?.[
        'cluster-autoscaler.kubernetes.io/enable-ds-eviction' as never
      ],
      'false',
    );
  });

  test('DaemonSet: container security context: privileged (the /dev/kmsg device), read-only root', () => {
    // No capabilities list and no allowPrivilegeEscalation: privileged grants every capability, and the
    // API server rejects allowPrivilegeEscalation: false together with privileged: true.
    // test/container/daemonset.test.ts runs the image with exactly this and proves it reads /dev/kmsg.
    const c = agentContainer(one(base, 'DaemonSet'));
    assert.deepEqual(c.securityContext, {
      privileged: true,
      runAsUser: 0,
      runAsGroup: 0,
      runAsNonRoot: false,
      readOnlyRootFilesystem: true,
    });
  });

  test('DaemonSet: host mounts are exactly the read-only set the monitors read, below --host-root', () => {
    const ds = one(base, 'DaemonSet');
    const spec = podSpec(ds);
    const c = agentContainer(ds);
    const hostPaths = Object.fromEntries(
      spec.volumes.filter((v) => v.hostPath).map((v) => [v.name, v.hostPath!]),
    );
    assert.deepEqual(
      Object.values(hostPaths)
        .map((h) => `${h.path}:${h.type}`)
        .sort(),
      [
        '/dev/kmsg:CharDevice',
        '/etc/localtime:File',
        '/proc/1/mountinfo:File',
        '/run/log/journal:DirectoryOrCreate',
        '/var/log:Directory',
      ],
    );
    const opts = parseOptions(c.args, {}, 'host');
    for (const m of c.volumeMounts) {
      const hp = hostPaths[m.name];
      if (!hp) continue;
      assert.equal(m.readOnly, true, `${m.mountPath} must be read-only`);
      const expected = hp.path === '/etc/localtime' ? '/etc/localtime' : `${opts.options.hostRoot}${hp.path}`;
      assert.equal(m.mountPath, expected, `host ${hp.path} is seen at --host-root${hp.path}`);
    }
    assert.equal(
      c.volumeMounts.filter((m) => hostPaths[m.name]).length,
      Object.keys(hostPaths).length,
      'every hostPath is mounted',
    );
    // No host /proc: its /proc/<pid>/root would be every host process's root file system. The agent
    // reads the kernel-wide files from the pod's own /proc and the host's mount table from the one file.
    const paths = agentPaths(opts.options.hostRoot, opts.options.hostProc);
    assert.equal(paths.proc, '/proc', "--host-proc is the pod's own /proc");
    assert.ok(
      c.volumeMounts.some((m) => m.mountPath === paths.initMountinfo),
      `${paths.initMountinfo} is mounted`,
    );
    const writable = c.volumeMounts.filter((m) => !m.readOnly).map((m) => m.mountPath);
    assert.deepEqual(writable, ['/tmp'], 'the only writable mount is the in-memory /tmp');
    const tmp = spec.volumes.find((v) => v.name === c.volumeMounts.find((m) => m.mountPath === '/tmp')?.name);
    assert.deepEqual(tmp?.emptyDir, { medium: 'Memory', sizeLimit: '16Mi' });
  });

  test('DaemonSet: args parse with the agent flag parser and point at files in the ConfigMap', () => {
    const c = agentContainer(one(base, 'DaemonSet'));
    const parsed = parseOptions(c.args, {}, 'host');
    assert.deepEqual(parsed.errors, []);
    assert.deepEqual(parsed.positional, []);
    assert.deepEqual(parsed.ignored, []);
    const o = parsed.options;
    assert.equal(o.hostRoot, '/host');
    assert.equal(o.enableK8sExporter, true);
    assertMonitorConfigsMounted(base, [
      ...o.systemLogMonitors,
      ...o.customPluginMonitors,
      ...o.systemStatsMonitors,
      ...o.probeMonitors,
    ]);
    // kernel, readonly, probes (in its pod variant) and the hardware, storage and network rules,
    // which share the kernel monitor's /dev/kmsg reader.
    assert.deepEqual(o.systemLogMonitors, [
      '/config/kernel.yaml',
      '/config/readonly.yaml',
      '/config/hardware.yaml',
      '/config/storage.yaml',
      '/config/network.yaml',
    ]);
    assert.deepEqual(o.probeMonitors, ['/config/probes-daemonset.yaml']);
    // The agent without --config.* flags (src/cli.ts) runs the same files.
    const deployed = [...o.systemLogMonitors, ...o.probeMonitors].map((f) =>
      basename(f).replace('probes-daemonset.yaml', 'probes.yaml'),
    );
    assert.deepEqual(DEFAULT_RULES, deployed);
    assert.equal(
      (c as unknown as Obj).command,
      undefined,
      "no command: the image's tini ENTRYPOINT stays PID 1",
    );
    const nodeName = c.env.find((e) => e.name === 'NODE_NAME');
    assert.deepEqual(nodeName?.valueFrom, { fieldRef: { fieldPath: 'spec.nodeName' } });
    assert.equal(parseOptions(c.args, { NODE_NAME: 'n1' }, 'host').options.nodeName, 'n1');
  });

  test('DaemonSet: probes and ports match the listeners the args configure', () => {
    const ds = one(base, 'DaemonSet');
    const c = agentContainer(ds);
    const o = parseOptions(c.args, {}, 'host').options;
    const port = (name: string) => c.ports.find((p) => p.name === name)?.containerPort;
    assert.equal(port('status'), o.port);
    assert.equal(port('metrics'), o.prometheusPort);
    assert.equal(o.port, 20256);
    assert.equal(o.prometheusPort, 20257);
    // Without hostNetwork kubelet probes the pod IP: a 127.0.0.1 bind would fail every probe.
    assert.equal(o.address, '0.0.0.0');
    assert.equal(o.prometheusAddress, '0.0.0.0');
    assert.deepEqual(get(c.livenessProbe, 'httpGet'), { path: '/healthz', port: 'status' });
    assert.deepEqual(get(c.readinessProbe, 'httpGet'), { path: '/readyz', port: 'status' });
    const grace = get(podSpec(ds), 'terminationGracePeriodSeconds') as number;
    assert.ok(grace * 1000 > o.shutdownGraceMs + 2000, 'the pod outlives the agent shutdown deadline');
  });

  test('DaemonSet: resources are set, limits above requests, V8 heap cap below the memory limit', () => {
    const c = agentContainer(one(base, 'DaemonSet'));
    const { requests, limits } = c.resources;
    assert.ok(requests.cpu && requests.memory && limits.cpu && limits.memory);
    assert.ok(mi(limits.memory) >= 2 * mi(requests.memory), 'memory headroom');
    assert.ok(milli(limits.cpu) > milli(requests.cpu));
    const nodeOptions = c.env.find((e) => e.name === 'NODE_OPTIONS')?.value ?? '';
    const heap = /--max-old-space-size=(\d+)/.exec(nodeOptions);
    assert.ok(heap, 'NODE_OPTIONS caps the V8 heap');
    assert.ok(
      Number(heap[1]) < mi(limits.memory) - mi(requests.memory) / 2,
      'heap cap leaves room for the rest of the process',
    );
  });
});
