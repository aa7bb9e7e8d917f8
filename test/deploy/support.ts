// Shared helpers of the deploy tests: rendering the kustomize tree in deploy/ with kubectl, and reading
// the rendered objects (the DaemonSet's pod spec and container, the least-privilege RBAC rules, the
// metric names the agent registers).
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, relative, resolve } from 'node:path';
import { parseAllDocuments } from 'yaml';

export const ROOT = resolve(import.meta.dirname, '..', '..');
export const KUBECTL = '/usr/bin/kubectl';
/** The skip reason of the tests that render with `kubectl kustomize`, or false. */
export const kubectlSkip: string | false = existsSync(KUBECTL)
  ? false
  : `${KUBECTL} not found (kubectl with kustomize is needed)`;

export type Obj = Record<string, unknown>;
export interface Doc {
  apiVersion: string;
  kind: string;
  metadata: { name: string; namespace?: string; labels?: Record<string, string> };
  [k: string]: unknown;
}

/** `kubectl kustomize dir`, one parsed object a document. */
export function kustomize(dir: string): Doc[] {
  const out = execFileSync(KUBECTL, ['kustomize', dir], {
    encoding: 'utf8',
    env: { ...process.env, HOME: tmpdir() },
  });
  return parseAllDocuments(out).map((d, i) => {
    assert.equal(d.errors.length, 0, `document ${i} of ${dir}: ${d.errors.map((e) => e.message).join('; ')}`);
    return d.toJS() as Doc;
  });
}

export const renderBase = (): Doc[] => kustomize(join(ROOT, 'deploy/base'));
export const renderOverlay = (): Doc[] => kustomize(join(ROOT, 'deploy/overlays/example'));

/**
 * Renders a throw-away kustomization (outside the repo) over deploy/base plus `extra` lines; kustomize
 * takes only relative paths to other kustomizations, so `extra` gets the path from the temp dir to a
 * repository path.
 */
export function kustomizeBase(extra: (fromTmp: (repoPath: string) => string) => string[]): Doc[] {
  const dir = mkdtempSync(join(tmpdir(), 'npd-kustomize-'));
  const fromTmp = (repoPath: string): string => relative(dir, join(ROOT, repoPath));
  try {
    const lines = [
      'apiVersion: kustomize.config.k8s.io/v1beta1',
      'kind: Kustomization',
      'resources:',
      `  - ${fromTmp('deploy/base')}`,
      ...extra(fromTmp),
    ];
    writeFileSync(join(dir, 'kustomization.yaml'), `${lines.join('\n')}\n`);
    return kustomize(dir);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

/** deploy/base plus the named components of deploy/components. */
export const kustomizeWith = (components: readonly string[]): Doc[] =>
  kustomizeBase((fromTmp) => [
    'components:',
    ...components.map((c) => `  - ${fromTmp(`deploy/components/${c}`)}`),
  ]);

/** The one object of `kind` (and `name`, when given) in `docs`. */
export const one = (docs: Doc[], kind: string, name?: string): Doc => {
  const found = docs.filter((d) => d.kind === kind && (name === undefined || d.metadata.name === name));
  assert.equal(found.length, 1, `expected one ${kind}${name ? ` ${name}` : ''}, found ${found.length}`);
  return found[0]!;
};
/** The value at a dotted path, undefined where any step is missing. */
export const get = (o: unknown, path: string): unknown =>
  path.split('.').reduce<unknown>((v, k) => (v === undefined || v === null ? undefined : (v as Obj)[k]), o);

export interface Mount {
  name: string;
  mountPath: string;
  readOnly?: boolean;
}
export interface Volume {
  name: string;
  hostPath?: { path: string; type?: string };
  configMap?: { name: string };
  projected?: { sources: { configMap?: { name: string } }[] };
  emptyDir?: Obj;
}
export interface Container {
  name: string;
  image: string;
  args: string[];
  env: { name: string; value?: string; valueFrom?: Obj }[];
  ports: { name: string; containerPort: number }[];
  livenessProbe: Obj;
  readinessProbe: Obj;
  resources: { requests: Record<string, string>; limits: Record<string, string> };
  securityContext: Obj;
  volumeMounts: Mount[];
}
/**
 * The args as kubelet runs them: each `$(NAME)` of a variable the container's env defines is expanded,
 * downward API fields (`valueFrom.fieldRef`) taking their value from `fields`; others stay as written.
 */
export function kubeletArgs(c: Container, fields: Readonly<Record<string, string>>): string[] {
  const env = new Map<string, string>();
  for (const e of c.env) {
    const path = (e.valueFrom?.fieldRef as { fieldPath?: string } | undefined)?.fieldPath;
    const value = e.value ?? (path === undefined ? undefined : fields[path]);
    if (value !== undefined) env.set(e.name, value);
  }
  return c.args.map((a) =>
    a.replace(/\$\(([A-Za-z_][A-Za-z0-9_]*)\)/g, (m, name: string) => env.get(name) ?? m),
  );
}

export interface PodSpec {
  containers: Container[];
  volumes: Volume[];
  [k: string]: unknown;
}
export const podSpec = (ds: Doc): PodSpec => get(ds, 'spec.template.spec') as PodSpec;
/** The DaemonSet's one container. */
export const agentContainer = (ds: Doc): Container => {
  const cs = podSpec(ds).containers;
  assert.equal(cs.length, 1, 'one container');
  return cs[0]!;
};
/** Names of the ConfigMaps projected into the config volume. */
export const configSources = (ds: Doc): string[] =>
  podSpec(ds)
    .volumes.flatMap((v) => v.projected?.sources ?? [])
    .map((src) => src.configMap?.name)
    .filter((n): n is string => n !== undefined);

/** The data of all the ConfigMaps in `docs`, merged: what the projected config volume holds. */
export const configMapData = (docs: readonly Doc[]): Record<string, string> =>
  Object.assign({}, ...docs.filter((d) => d.kind === 'ConfigMap').map((d) => d.data));

/** The least-privilege rules the agent needs; nothing more may be granted by deploy/base. */
export const EXPECTED_RULES = [
  { apiGroups: [''], resources: ['nodes'], verbs: ['get'] },
  { apiGroups: [''], resources: ['nodes/status'], verbs: ['patch'] },
  { apiGroups: ['', 'events.k8s.io'], resources: ['events'], verbs: ['create', 'patch'] },
];
export const RBAC_KINDS = new Set(['Role', 'ClusterRole', 'RoleBinding', 'ClusterRoleBinding']);

/** The file names of rules/*.yaml, sorted. */
export const ruleFiles = (): string[] =>
  readdirSync(join(ROOT, 'rules'))
    .filter((f) => f.endsWith('.yaml'))
    .sort();

/**
 * Metric and label names the agent registers, from the string literals in src/: a label name is a
 * quoted word of a `labelNames: [...]` (such as npd_condition_problem's `problem_when`), every other
 * quoted npd_* or problem_* word is a metric name.
 */
function scanSrcNames(): { metrics: Set<string>; labels: Set<string> } {
  const metrics = new Set<string>();
  const labels = new Set<string>();
  const walk = (dir: string): void => {
    for (const e of readdirSync(dir, { withFileTypes: true })) {
      const p = join(dir, e.name);
      if (e.isDirectory()) walk(p);
      else if (e.name.endsWith('.ts')) {
        const text = readFileSync(p, 'utf8');
        const own = new Set(
          [...text.matchAll(/labelNames: \[([^\]]*)\]/g)].flatMap((l) =>
            [...l[1]!.matchAll(/'(\w+)'/g)].map((q) => q[1]!),
          ),
        );
        for (const l of own) labels.add(l);
        for (const m of text.matchAll(/'((?:npd|problem)_[a-z0-9_]+)'/g))
          if (!own.has(m[1]!)) metrics.add(m[1]!);
      }
    }
  };
  walk(join(ROOT, 'src'));
  return { metrics, labels };
}

/** Metric names the agent registers, from the string literals in src/. */
export function registeredMetricNames(): Set<string> {
  return scanSrcNames().metrics;
}

/** Label names of the agent's metrics (`labelNames` in src/). */
export function registeredLabelNames(): Set<string> {
  return scanSrcNames().labels;
}
