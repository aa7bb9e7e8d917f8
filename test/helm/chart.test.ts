// The chart with the real helm (test/tools/go-tools.sh): `helm lint --strict`, `helm template` for the
// defaults and each value set of support.ts (what each set must change is asserted), and the values
// schema: a wrong type, an unknown key or a bad enum is rejected by helm itself (negative controls).
//   node --import tsx --test test/helm/chart.test.ts
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, test } from 'node:test';
import { parse } from 'yaml';
import { agentContainer, type Doc, one, podSpec } from '../deploy/support.ts';
import {
  CHART,
  helmTemplate,
  helmTemplateResult,
  helmWithValues,
  toolsOrSkip,
  VALUE_SETS,
} from './support.ts';

const { tools, skip } = await toolsOrSkip();

const ds = (docs: Doc[]) => one(docs, 'DaemonSet');
const args = (docs: Doc[]) => agentContainer(ds(docs)).args;

describe('helm lint and template', { skip }, () => {
  test('helm lint --strict passes with the defaults and with every value set', async () => {
    for (const [name, values] of Object.entries(VALUE_SETS)) {
      const r = await helmWithValues(tools!, ['lint', '--strict', CHART], values);
      assert.equal(r.code, 0, `${name}: helm lint --strict failed:\n${r.stdout}\n${r.stderr}`);
      assert.match(r.stdout, /1 chart\(s\) linted, 0 chart\(s\) failed/);
    }
  });

  test('defaults: the monitors and privilege variant values.yaml names, metrics off', async () => {
    const defaults = parse(readFileSync(join(CHART, 'values.yaml'), 'utf8')) as {
      monitors: { systemLog: string[]; probe: string[] };
      privileged: boolean;
    };
    const docs = await helmTemplate(tools!);
    // Which objects, exactly: agreement.test.ts (= deploy/base).
    assert.ok(!docs.some((d) => d.kind === 'ServiceMonitor' || d.kind === 'PrometheusRule'), 'metrics off');
    const paths = (files: string[]) => files.map((f) => `/config/${f}`).join(',');
    assert.deepEqual(args(docs).slice(0, 2), [
      `--config.system-log-monitor=${paths(defaults.monitors.systemLog)}`,
      `--config.probe-monitor=${paths(defaults.monitors.probe)}`,
    ]);
    assert.equal(agentContainer(ds(docs)).image, 'node-problem-detector:0.1.0');
    assert.equal(agentContainer(ds(docs)).securityContext.privileged, defaults.privileged);
  });

  test('privileged: false is the least-privilege variant (SYSLOG only, no escalation, seccomp)', async () => {
    const c = agentContainer(ds(await helmTemplate(tools!, { privileged: false })));
    assert.deepEqual(c.securityContext, {
      runAsUser: 0,
      runAsGroup: 0,
      runAsNonRoot: false,
      privileged: false,
      allowPrivilegeEscalation: false,
      readOnlyRootFilesystem: true,
      capabilities: { drop: ['ALL'], add: ['SYSLOG'] },
      seccompProfile: { type: 'RuntimeDefault' },
    });
  });

  test('metrics and taint: Service, ServiceMonitor, PrometheusRule, dashboard, taint RBAC', async () => {
    const docs = await helmTemplate(tools!, VALUE_SETS['metrics and taint']!);
    for (const kind of ['Service', 'ServiceMonitor', 'PrometheusRule']) one(docs, kind);
    const dashboard = docs.find(
      (d) => d.kind === 'ConfigMap' && d.metadata.labels?.grafana_dashboard === '1',
    );
    assert.ok(dashboard, 'a ConfigMap with the Grafana sidecar label');
    JSON.parse((dashboard.data as Record<string, string>)['node-problem-detector.json']!);
    one(docs, 'ClusterRole', 'node-problem-detector-taint');
    assert.equal(one(docs, 'ServiceMonitor').metadata.labels?.release, 'kube-prometheus-stack');
    const groups = (
      one(docs, 'PrometheusRule').spec as { groups: { name: string; rules: { alert?: string }[] }[] }
    ).groups;
    assert.ok(
      groups.some((g) => g.rules.some((r) => r.alert === 'SiteNodeProblem')),
      'additionalRules appended',
    );
    assert.ok(
      groups.some((g) => g.rules.some((r) => r.alert === 'NodeProblemDetectorDown')),
      'shipped rules kept',
    );
  });

  test('privileged, digest, scheduling values reach the pod spec', async () => {
    const docs = await helmTemplate(tools!, VALUE_SETS['privileged, digest, scheduling']!);
    const spec = podSpec(ds(docs));
    const c = agentContainer(ds(docs));
    assert.equal(c.securityContext.privileged, true);
    assert.equal(c.securityContext.readOnlyRootFilesystem, true);
    assert.equal(c.securityContext.capabilities, undefined);
    assert.equal(c.image, `registry.example.com/npd@sha256:${'a'.repeat(64)}`);
    assert.equal(spec.priorityClassName, undefined);
    // Helm merges maps into the defaults: the linux selector stays (set it to null to drop it).
    assert.deepEqual(spec.nodeSelector, {
      'kubernetes.io/os': 'linux',
      'node-role.kubernetes.io/worker': '',
    });
    assert.ok(spec.affinity);
    assert.equal((spec.tolerations as object[]).length, 1);
    assert.equal(spec.hostNetwork, true);
    assert.equal(spec.dnsPolicy, 'ClusterFirstWithHostNet');
    assert.deepEqual((ds(docs).spec as { updateStrategy: object }).updateStrategy, {
      type: 'RollingUpdate',
      rollingUpdate: { maxUnavailable: 1 },
    });
    assert.deepEqual(c.resources.limits, { cpu: '200m', memory: '300Mi' }, 'merged into the defaults');
  });

  test('journald, node probes, gpu: their monitors run; node probes get the node network and socket folders', async () => {
    const docs = await helmTemplate(tools!, VALUE_SETS['journald, node probes, gpu']!);
    const a = args(docs);
    for (const arg of [
      '--config.system-log-monitor=/config/containerd.yaml,/config/systemd.yaml,/config/kubelet.yaml',
      '--config.probe-monitor=/config/probes-node.yaml',
      '--config.system-log-monitor=/config/gpu.yaml',
      '--config.gpu-monitor=/config/gpu-nvml.yaml',
    ]) {
      assert.ok(a.includes(arg), `${arg} in ${a.join(' ')}`);
    }
    const spec = podSpec(ds(docs));
    assert.equal(spec.hostNetwork, true);
    assert.ok(
      a.includes('--address=$(HOST_IP)') && a.includes('--prometheus-address=$(HOST_IP)'),
      a.join(' '),
    );
    assert.ok(!a.some((x) => x.includes('0.0.0.0')), 'no listener on every node address');
    const hostIp = agentContainer(ds(docs)).env.find((e) => e.name === 'HOST_IP');
    assert.deepEqual(hostIp?.valueFrom, { fieldRef: { fieldPath: 'status.hostIP' } });
    const sockets = spec.volumes
      .filter((v) => ['dbus', 'containerd'].includes(v.name))
      .map((v) => v.hostPath);
    assert.deepEqual(sockets, [
      { path: '/run/dbus', type: 'DirectoryOrCreate' },
      { path: '/run/containerd', type: 'DirectoryOrCreate' },
    ]);
  });

  test('custom monitors land in /config and run; extra args, env, volumes are appended', async () => {
    const docs = await helmTemplate(tools!, VALUE_SETS['custom monitors, extras']!);
    const config = docs.find((d) => d.kind === 'ConfigMap' && d.metadata.name.includes('-config-'))!;
    const custom = JSON.parse((config.data as Record<string, string>)['my-filelog.json']!);
    assert.equal(custom.source, 'my-monitor');
    const a = args(docs);
    assert.equal(
      a[0],
      '--config.system-log-monitor=/config/kernel.yaml,/config/hardware.yaml,/config/my-filelog.json',
    );
    assert.equal(a[1], '--config.custom-plugin-monitor=/custom/plugin.json');
    assert.equal(a.at(-1), '--k8s-exporter-heartbeat-period=1m');
    const c = agentContainer(ds(docs));
    assert.ok(c.env.some((e) => e.name === 'LOG_LEVEL'));
    assert.ok(c.volumeMounts.some((m) => m.mountPath === '/custom'));
    assert.ok(podSpec(ds(docs)).volumes.some((v) => v.name === 'custom'));
  });

  test('a rules change renames the rules ConfigMap (the DaemonSet rolls at maxUnavailable)', async () => {
    const a = await helmTemplate(tools!);
    const b = await helmTemplate(tools!, { customMonitors: { 'x.json': '{}' } });
    const names = (docs: Doc[]) =>
      docs
        .filter((d) => d.kind === 'ConfigMap')
        .map((d) => d.metadata.name)
        .sort();
    assert.notDeepEqual(names(a), names(b));
    const projected = (docs: Doc[]) => JSON.stringify(podSpec(ds(docs)).volumes[0]);
    for (const n of names(b)) assert.ok(projected(b).includes(n), `${n} is mounted`);
  });
});

describe('values.schema.json is enforced by helm (negative controls)', { skip }, () => {
  const rejected = async (values: object, pattern: RegExp) => {
    const r = await helmTemplateResult(tools!, values);
    assert.notEqual(r.code, 0, `helm accepted ${JSON.stringify(values)}`);
    assert.match(r.stderr, pattern);
  };

  test('a wrong type is rejected', async () => {
    // Not 'yes': helm reads values as YAML 1.1, where an unquoted yes is a boolean.
    await rejected({ privileged: 'enabled' }, /privileged.*(got string, want boolean|boolean)/);
    await rejected({ tolerations: { operator: 'Exists' } }, /tolerations.*(want array|array)/);
    await rejected({ ports: { metrics: '20257' } }, /metrics.*(want integer|integer)/);
  });

  test('an unknown key (a typo) and a bad enum are rejected', async () => {
    await rejected({ tolerationz: [] }, /additional properties 'tolerationz' not allowed|tolerationz/);
    await rejected({ image: { pullPolicy: 'Sometimes' } }, /pullPolicy/);
  });

  test('template checks: no monitor at all, a custom monitor shadowing a shipped file', async () => {
    await rejected({ monitors: { systemLog: [], probe: [] } }, /every list is empty/);
    await rejected({ customMonitors: { 'kernel.yaml': 'x' } }, /customMonitors\.kernel\.yaml/);
    await rejected({ metrics: { serviceMonitor: { enabled: true } } }, /needs metrics\.service\.enabled/);
  });

  test('control: the same keys with the right types are accepted', async () => {
    const r = await helmTemplateResult(tools!, {
      privileged: true,
      tolerations: [],
      ports: { metrics: 9100 },
    });
    assert.equal(r.code, 0, r.stderr);
  });
});
