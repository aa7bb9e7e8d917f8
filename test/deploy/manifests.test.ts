// Client-side checks of the kustomize tree in deploy/: it renders, the RBAC is the least-privilege set,
// the rules ConfigMap is the repository's rules/, and the DaemonSet's security, mounts, args, probes
// and ports agree with each other and with the agent's own flag parser.
//   node --import tsx --test test/deploy/manifests.test.ts
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, relative, resolve } from 'node:path';
import { describe, test } from 'node:test';
import { parseAllDocuments, parse as parseYaml } from 'yaml';
import { parseOptions } from '../../src/config/options.ts';

const ROOT = resolve(import.meta.dirname, '..', '..');
const KUBECTL = '/usr/bin/kubectl';
const skip = existsSync(KUBECTL) ? false : `${KUBECTL} not found (kubectl with kustomize is needed)`;

type Obj = Record<string, unknown>;
interface Doc {
  apiVersion: string;
  kind: string;
  metadata: { name: string; namespace?: string; labels?: Record<string, string> };
  [k: string]: unknown;
}

function kustomize(dir: string): Doc[] {
  const out = execFileSync(KUBECTL, ['kustomize', dir], {
    encoding: 'utf8',
    env: { ...process.env, HOME: tmpdir() },
  });
  return parseAllDocuments(out).map((d, i) => {
    assert.equal(d.errors.length, 0, `document ${i} of ${dir}: ${d.errors.map((e) => e.message).join('; ')}`);
    return d.toJS() as Doc;
  });
}

/** Renders a throw-away kustomization (outside the repo) over deploy/base plus components; kustomize
 * takes only relative paths to other kustomizations. */
function kustomizeWith(components: string[]): Doc[] {
  const dir = mkdtempSync(join(tmpdir(), 'npd-kustomize-'));
  try {
    const lines = [
      'apiVersion: kustomize.config.k8s.io/v1beta1',
      'kind: Kustomization',
      'resources:',
      `  - ${relative(dir, join(ROOT, 'deploy/base'))}`,
      'components:',
      ...components.map((c) => `  - ${relative(dir, join(ROOT, 'deploy/components', c))}`),
    ];
    writeFileSync(join(dir, 'kustomization.yaml'), `${lines.join('\n')}\n`);
    return kustomize(dir);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

const one = (docs: Doc[], kind: string, name?: string): Doc => {
  const found = docs.filter((d) => d.kind === kind && (name === undefined || d.metadata.name === name));
  assert.equal(found.length, 1, `expected one ${kind}${name ? ` ${name}` : ''}, found ${found.length}`);
  return found[0]!;
};
const get = (o: unknown, path: string): unknown =>
  path.split('.').reduce<unknown>((v, k) => (v === undefined || v === null ? undefined : (v as Obj)[k]), o);

interface Container {
  name: string;
  image: string;
  args: string[];
  env: { name: string; value?: string; valueFrom?: Obj }[];
  ports: { name: string; containerPort: number }[];
  livenessProbe: Obj;
  readinessProbe: Obj;
  resources: { requests: Record<string, string>; limits: Record<string, string> };
  securityContext: Obj;
  volumeMounts: { name: string; mountPath: string; readOnly?: boolean }[];
}
interface PodSpec {
  containers: Container[];
  volumes: {
    name: string;
    hostPath?: { path: string; type?: string };
    configMap?: { name: string };
    projected?: { sources: { configMap?: { name: string } }[] };
    emptyDir?: Obj;
  }[];
  [k: string]: unknown;
}
const podSpec = (ds: Doc): PodSpec => get(ds, 'spec.template.spec') as PodSpec;
/** Names of the ConfigMaps projected into the config volume. */
const configSources = (ds: Doc): string[] =>
  podSpec(ds)
    .volumes.flatMap((v) => v.projected?.sources ?? [])
    .map((src) => src.configMap?.name)
    .filter((n): n is string => n !== undefined);
const agentContainer = (ds: Doc): Container => {
  const cs = podSpec(ds).containers;
  assert.equal(cs.length, 1, 'one container');
  return cs[0]!;
};

/** The least-privilege rules the agent needs; nothing more may be granted by deploy/base. */
const EXPECTED_RULES = [
  { apiGroups: [''], resources: ['nodes'], verbs: ['get'] },
  { apiGroups: [''], resources: ['nodes/status'], verbs: ['patch'] },
  { apiGroups: ['', 'events.k8s.io'], resources: ['events'], verbs: ['create', 'patch', 'update'] },
];
const RBAC_KINDS = new Set(['Role', 'ClusterRole', 'RoleBinding', 'ClusterRoleBinding']);

/** Metric names the agent registers, from the string literals in src/. */
function registeredMetricNames(): Set<string> {
  const names = new Set<string>();
  const walk = (dir: string): void => {
    for (const e of readdirSync(dir, { withFileTypes: true })) {
      const p = join(dir, e.name);
      if (e.isDirectory()) walk(p);
      else if (e.name.endsWith('.ts')) {
        for (const m of readFileSync(p, 'utf8').matchAll(/'((?:npd|problem)_[a-z0-9_]+)'/g)) names.add(m[1]!);
      }
    }
  };
  walk(join(ROOT, 'src'));
  return names;
}

const ruleFiles = (): string[] =>
  readdirSync(join(ROOT, 'rules'))
    .filter((f) => f.endsWith('.yaml'))
    .sort();

describe('deploy/ kustomize', { skip }, () => {
  const base = skip ? [] : kustomize(join(ROOT, 'deploy/base'));
  const overlay = skip ? [] : kustomize(join(ROOT, 'deploy/overlays/example'));

  test('base and example overlay render; every document has apiVersion, kind and metadata.name', () => {
    for (const [label, docs] of [
      ['base', base],
      ['overlay', overlay],
    ] as const) {
      assert.ok(docs.length > 0, `${label} rendered nothing`);
      const ids = new Set<string>();
      for (const d of docs) {
        assert.equal(
          typeof d.apiVersion,
          'string',
          `${label}: apiVersion of ${JSON.stringify(d).slice(0, 80)}`,
        );
        assert.equal(typeof d.kind, 'string', `${label}: kind`);
        assert.equal(typeof d.metadata?.name, 'string', `${label}: metadata.name of a ${d.kind}`);
        const id = `${d.kind}/${d.metadata.namespace ?? ''}/${d.metadata.name}`;
        assert.ok(!ids.has(id), `${label}: duplicate ${id}`);
        ids.add(id);
      }
    }
    assert.deepEqual(base.map((d) => d.kind).sort(), [
      'ClusterRole',
      'ClusterRoleBinding',
      'ConfigMap',
      'ConfigMap',
      'DaemonSet',
      'ServiceAccount',
    ]);
    assert.deepEqual(overlay.map((d) => d.kind).sort(), [
      'ClusterRole',
      'ClusterRoleBinding',
      'ConfigMap',
      'ConfigMap',
      'DaemonSet',
      'PrometheusRule',
      'Service',
      'ServiceAccount',
      'ServiceMonitor',
    ]);
  });

  test('namespaced objects live in kube-system', () => {
    for (const d of overlay) {
      if (d.kind.startsWith('Cluster'))
        assert.equal(d.metadata.namespace, undefined, `${d.kind} is cluster-scoped`);
      else assert.equal(d.metadata.namespace, 'kube-system', `${d.kind}/${d.metadata.name}`);
    }
  });

  test('the ClusterRole grants exactly the least-privilege rules, bound only to the agent ServiceAccount', () => {
    for (const docs of [base, overlay]) {
      const role = one(docs, 'ClusterRole');
      assert.equal(role.metadata.name, 'node-problem-detector');
      assert.deepEqual(role.rules, EXPECTED_RULES);
      assert.deepEqual(
        docs
          .filter((d) => RBAC_KINDS.has(d.kind))
          .map((d) => d.kind)
          .sort(),
        ['ClusterRole', 'ClusterRoleBinding'],
        'no other RBAC objects',
      );
      const binding = one(docs, 'ClusterRoleBinding');
      assert.deepEqual(binding.roleRef, {
        apiGroup: 'rbac.authorization.k8s.io',
        kind: 'ClusterRole',
        name: 'node-problem-detector',
      });
      assert.deepEqual(binding.subjects, [
        { kind: 'ServiceAccount', name: 'node-problem-detector', namespace: 'kube-system' },
      ]);
      const sa = one(docs, 'ServiceAccount');
      assert.equal(sa.metadata.name, 'node-problem-detector');
      assert.equal(
        get(one(docs, 'DaemonSet'), 'spec.template.spec.serviceAccountName'),
        'node-problem-detector',
      );
    }
  });

  test('deploy/base/clusterrole.yaml itself holds exactly those rules', () => {
    const doc = parseAllDocuments(readFileSync(join(ROOT, 'deploy/base/clusterrole.yaml'), 'utf8'));
    assert.equal(doc.length, 1);
    assert.deepEqual((doc[0]!.toJS() as Doc).rules, EXPECTED_RULES);
  });

  test('the taint component adds only `patch nodes`, bound to the same ServiceAccount', { skip }, () => {
    const docs = kustomizeWith(['taint']);
    const extra = docs.filter(
      (d) => RBAC_KINDS.has(d.kind) && d.metadata.name === 'node-problem-detector-taint',
    );
    assert.deepEqual(extra.map((d) => d.kind).sort(), ['ClusterRole', 'ClusterRoleBinding']);
    const role = one(docs, 'ClusterRole', 'node-problem-detector-taint');
    assert.deepEqual(role.rules, [{ apiGroups: [''], resources: ['nodes'], verbs: ['patch'] }]);
    const binding = one(docs, 'ClusterRoleBinding', 'node-problem-detector-taint');
    assert.deepEqual(binding.subjects, [
      { kind: 'ServiceAccount', name: 'node-problem-detector', namespace: 'kube-system' },
    ]);
    assert.deepEqual(
      one(docs, 'ClusterRole', 'node-problem-detector').rules,
      EXPECTED_RULES,
      'base role unchanged',
    );
  });

  test('deploy/base/rules/ holds byte-identical copies of rules/*.yaml (deploy/sync-rules.sh)', () => {
    const copies = readdirSync(join(ROOT, 'deploy/base/rules'))
      .filter((f) => f.endsWith('.yaml') && f !== 'kustomization.yaml')
      .sort();
    assert.deepEqual(copies, ruleFiles(), 'run deploy/sync-rules.sh');
    for (const f of ruleFiles()) {
      const a = readFileSync(join(ROOT, 'rules', f));
      const b = readFileSync(join(ROOT, 'deploy/base/rules', f));
      assert.ok(a.equals(b), `deploy/base/rules/${f} differs from rules/${f}: run deploy/sync-rules.sh`);
    }
    execFileSync('bash', [join(ROOT, 'deploy/sync-rules.sh'), '--check'], { stdio: 'pipe' });
  });

  test('the rules ConfigMap data equals the files in rules/', () => {
    const cms = base.filter(
      (d) => d.kind === 'ConfigMap' && d.metadata.name.startsWith('node-problem-detector-rules-'),
    );
    assert.equal(cms.length, 1);
    const cm = cms[0]!;
    assert.match(
      cm.metadata.name,
      /^node-problem-detector-rules-[a-z0-9]+$/,
      'hash-suffixed, so a rules change rolls the pods',
    );
    const data = cm.data as Record<string, string>;
    assert.deepEqual(Object.keys(data).sort(), ruleFiles());
    for (const f of ruleFiles()) assert.equal(data[f], readFileSync(join(ROOT, 'rules', f), 'utf8'), f);
    const sources = configSources(one(base, 'DaemonSet'));
    assert.ok(sources.includes(cm.metadata.name), 'the DaemonSet mounts the generated ConfigMap');
  });

  test('the deployment ConfigMap holds deploy/base/config/, mounted beside the rules at /config', () => {
    const cm = base.find(
      (d) => d.kind === 'ConfigMap' && d.metadata.name.startsWith('node-problem-detector-config-'),
    );
    assert.ok(cm, 'node-problem-detector-config ConfigMap');
    const data = cm.data as Record<string, string>;
    const files = readdirSync(join(ROOT, 'deploy/base/config')).sort();
    assert.deepEqual(Object.keys(data).sort(), files);
    for (const f of files) assert.equal(data[f], readFileSync(join(ROOT, 'deploy/base/config', f), 'utf8'));
    for (const f of files)
      assert.ok(!ruleFiles().includes(f), `${f} must not shadow a rules/ file at /config`);
    assert.deepEqual(
      configSources(one(base, 'DaemonSet')).sort(),
      base
        .filter((d) => d.kind === 'ConfigMap')
        .map((d) => d.metadata.name)
        .sort(),
    );
  });

  test('deploy/base/config/probes-daemonset.yaml is rules/probes.yaml minus conntrack, disk/inodes on /var/log', () => {
    const load = (p: string) =>
      parseYaml(readFileSync(join(ROOT, p), 'utf8')) as {
        probes: { kind: string; paths?: string[] }[];
        [k: string]: unknown;
      };
    const shipped = load('rules/probes.yaml');
    const pod = load('deploy/base/config/probes-daemonset.yaml');
    const { probes: shippedProbes, ...shippedTop } = shipped;
    const { probes: podProbes, ...podTop } = pod;
    assert.deepEqual(podTop, shippedTop, 'same source, interval, splay, timeout, conditions');
    const expected = shippedProbes
      .filter((p) => p.kind !== 'conntrack')
      .map((p) => (p.kind === 'disk' || p.kind === 'inodes' ? { ...p, paths: ['/var/log'] } : p));
    assert.deepEqual(podProbes, expected);
  });

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

  test('DaemonSet: container security context', () => {
    const c = agentContainer(one(base, 'DaemonSet'));
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
        '/proc:Directory',
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
    const writable = c.volumeMounts.filter((m) => !m.readOnly).map((m) => m.mountPath);
    assert.deepEqual(writable, ['/tmp'], 'the only writable mount is the in-memory /tmp');
    const tmp = spec.volumes.find((v) => v.name === c.volumeMounts.find((m) => m.mountPath === '/tmp')?.name);
    assert.deepEqual(tmp?.emptyDir, { medium: 'Memory', sizeLimit: '16Mi' });
  });

  test('DaemonSet: args parse with the agent flag parser and point at files in the ConfigMap', () => {
    const ds = one(base, 'DaemonSet');
    const c = agentContainer(ds);
    const parsed = parseOptions(c.args, {}, 'host');
    assert.deepEqual(parsed.errors, []);
    assert.deepEqual(parsed.positional, []);
    assert.deepEqual(parsed.ignored, []);
    const o = parsed.options;
    assert.equal(o.hostRoot, '/host');
    assert.equal(o.enableK8sExporter, true);
    const configMount = c.volumeMounts.find(
      (m) => m.name === podSpec(ds).volumes.find((v) => v.projected)?.name,
    );
    assert.equal(configMount?.mountPath, '/config');
    const files = [
      ...o.systemLogMonitors,
      ...o.customPluginMonitors,
      ...o.systemStatsMonitors,
      ...o.probeMonitors,
    ];
    assert.ok(files.length > 0, 'at least one monitor config');
    const keys = base.filter((d) => d.kind === 'ConfigMap').flatMap((d) => Object.keys(d.data as object));
    for (const f of files) {
      assert.ok(f.startsWith('/config/'), `${f} comes from a ConfigMap`);
      assert.ok(keys.includes(f.slice('/config/'.length)), `${f} is a key of the mounted ConfigMaps`);
    }
    // The agent's own defaults (src/cli.ts): kernel, readonly, probes; probes in its pod variant.
    assert.deepEqual(o.systemLogMonitors, ['/config/kernel.yaml', '/config/readonly.yaml']);
    assert.deepEqual(o.probeMonitors, ['/config/probes-daemonset.yaml']);
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
    const mi = (q: string) => {
      const m = /^(\d+)(Mi|Gi)$/.exec(q);
      assert.ok(m, `memory quantity ${q}`);
      return Number(m[1]) * (m[2] === 'Gi' ? 1024 : 1);
    };
    const milli = (q: string) => (q.endsWith('m') ? Number(q.slice(0, -1)) : Number(q) * 1000);
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

  test('images: base uses the package version; the example overlay rewrites the registry', () => {
    const pkg = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as { version: string };
    assert.equal(agentContainer(one(base, 'DaemonSet')).image, `node-problem-detector:${pkg.version}`);
    assert.match(
      agentContainer(one(overlay, 'DaemonSet')).image,
      /^[a-z0-9.-]+\/node-problem-detector:[\w.-]+$/,
    );
  });

  test('metrics component: Service and ServiceMonitor select the agent pods and the metrics port', () => {
    const ds = one(overlay, 'DaemonSet');
    const podLabels = get(ds, 'spec.template.metadata.labels') as Record<string, string>;
    const svc = one(overlay, 'Service');
    for (const [k, v] of Object.entries(get(svc, 'spec.selector') as Record<string, string>))
      assert.equal(podLabels[k], v);
    assert.equal(get(svc, 'spec.clusterIP'), 'None');
    assert.equal(get(svc, 'spec.publishNotReadyAddresses'), true);
    const ports = get(svc, 'spec.ports') as { name: string; port: number; targetPort: string }[];
    assert.deepEqual(
      ports.map((p) => [p.name, p.port, p.targetPort]),
      [['metrics', 20257, 'metrics']],
    );
    assert.ok(agentContainer(ds).ports.some((p) => p.name === 'metrics'));
    const sm = one(overlay, 'ServiceMonitor');
    assert.equal(sm.apiVersion, 'monitoring.coreos.com/v1');
    const svcLabels = svc.metadata.labels ?? {};
    for (const [k, v] of Object.entries(get(sm, 'spec.selector.matchLabels') as Record<string, string>)) {
      assert.equal(svcLabels[k], v, `Service carries ${k}`);
    }
    const endpoints = get(sm, 'spec.endpoints') as { port: string; relabelings: Obj[] }[];
    assert.deepEqual(
      endpoints.map((e) => e.port),
      ['metrics'],
    );
    assert.ok(
      endpoints[0]!.relabelings.some((r) => r.targetLabel === 'node'),
      'adds the node label',
    );
    // The up{job=...} alert relies on the job label coming from this Service label.
    assert.equal(svcLabels[get(sm, 'spec.jobLabel') as string], 'node-problem-detector');
  });

  test('metrics component: alerts use metrics the agent registers', () => {
    const rule = one(overlay, 'PrometheusRule');
    assert.equal(rule.apiVersion, 'monitoring.coreos.com/v1');
    const known = registeredMetricNames();
    assert.ok(known.has('problem_counter') && known.has('problem_gauge'), 'metric scan works');
    const groups = get(rule, 'spec.groups') as {
      name: string;
      rules: { alert: string; expr: string; for?: string; labels: Obj }[];
    }[];
    const alerts = groups.flatMap((g) => g.rules);
    const used = new Set<string>();
    for (const a of alerts) {
      assert.match(a.alert, /^[A-Z][A-Za-z]+$/);
      assert.ok(['info', 'warning', 'critical'].includes(a.labels.severity as string), `${a.alert} severity`);
      for (const m of a.expr.matchAll(/\b((?:npd|problem)_[a-z0-9_]+)\b/g)) {
        assert.ok(known.has(m[1]!), `${a.alert}: ${m[1]} is not a metric registered in src/`);
        used.add(m[1]!);
      }
    }
    for (const m of [
      'problem_gauge',
      'problem_counter',
      'npd_condition_sync_total',
      'npd_monitor_healthy',
      'npd_events_dropped_total',
    ]) {
      assert.ok(used.has(m), `an alert on ${m}`);
    }
  });
});
