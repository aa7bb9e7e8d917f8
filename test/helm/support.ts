// Shared helpers of the Helm tests: running the real helm (built by test/tools/go-tools.sh) on the
// chart in deploy/helm/node-problem-detector, and reading what it renders.
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { cpSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parse, parseAllDocuments, stringify } from 'yaml';
import type { Doc } from '../deploy/support.ts';
import { ensureGoTools, type GoTools } from '../support/go-tools.ts';

export const CHART = join(import.meta.dirname, '..', '..', 'deploy', 'helm', 'node-problem-detector');
export const RELEASE = 'node-problem-detector';
export const NAMESPACE = 'kube-system';
const RULE_FILE = join(import.meta.dirname, '..', '..', 'deploy/components/metrics/prometheusrule.yaml');

export interface AlertRule {
  alert?: string;
  expr: string;
}
/** The shipped PrometheusRule's spec.groups, as a plain Prometheus rule file has them. */
export const shippedGroups = (): { name: string; rules: AlertRule[] }[] =>
  (parse(readFileSync(RULE_FILE, 'utf8')) as { spec: { groups: { name: string; rules: AlertRule[] }[] } })
    .spec.groups;

/** The tools, or the reason the Helm tests are skipped (the Go build failed or Go is missing). */
export async function toolsOrSkip(): Promise<{ tools?: GoTools; skip: string | false }> {
  try {
    return { tools: await ensureGoTools(), skip: false };
  } catch (err) {
    return { skip: `helm/promtool unavailable: ${(err as Error).message.split('\n').slice(0, 3).join(' ')}` };
  }
}

export interface RunResult {
  code: number;
  stdout: string;
  stderr: string;
}

/** Runs a binary with HOME (helm's caches and config) in a fresh temp folder. */
export function runTool(bin: string, args: readonly string[], cwd?: string): Promise<RunResult> {
  const home = mkdtempSync(join(tmpdir(), 'npd-helm-home-'));
  return new Promise((resolve, reject) => {
    execFile(
      bin,
      args,
      {
        cwd,
        env: { PATH: process.env.PATH ?? '', HOME: home },
        maxBuffer: 64 * 1024 * 1024,
        timeout: 120_000,
      },
      (err, stdout, stderr) => {
        rmSync(home, { recursive: true, force: true });
        if (err && typeof err.code !== 'number') reject(err);
        else resolve({ code: err ? Number(err.code) : 0, stdout, stderr });
      },
    );
  });
}

/** Runs helm with `args` plus `-f <values written to a temp file>`. */
export async function helmWithValues(
  tools: GoTools,
  args: readonly string[],
  values: object,
): Promise<RunResult> {
  const dir = mkdtempSync(join(tmpdir(), 'npd-helm-values-'));
  try {
    const file = join(dir, 'values.yaml');
    writeFileSync(file, stringify(values));
    return await runTool(tools.helm, [...args, '-f', file]);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

/** `helm template` of the chart with `values`, as a raw result. */
export const helmTemplateResult = (tools: GoTools, values: object = {}): Promise<RunResult> =>
  helmWithValues(tools, ['template', RELEASE, CHART, '--namespace', NAMESPACE], values);

/** `helm template` of the chart with `values`, one parsed object a document; fails on any error. */
export async function helmTemplate(tools: GoTools, values: object = {}): Promise<Doc[]> {
  const r = await helmTemplateResult(tools, values);
  assert.equal(r.code, 0, `helm template failed:\n${r.stderr}`);
  return parseAllDocuments(r.stdout)
    .map((d, i) => {
      assert.equal(d.errors.length, 0, `document ${i}: ${d.errors.map((e) => e.message).join('; ')}`);
      return d.toJS() as Doc | null;
    })
    .filter((d): d is Doc => d !== null);
}

/**
 * NOTES.txt as `helm install` would print it for `values`: helm template leaves NOTES out, so a copy
 * of the chart renders it into a YAML string.
 */
export async function renderNotes(tools: GoTools, values: object): Promise<string> {
  const dir = mkdtempSync(join(tmpdir(), 'npd-notes-'));
  try {
    const chart = join(dir, 'chart');
    cpSync(CHART, chart, { recursive: true });
    const text = readFileSync(join(chart, 'templates/NOTES.txt'), 'utf8');
    const wrapped = `{{- define "npd.testNotes" -}}\n${text}\n{{- end }}\nnotes: {{ include "npd.testNotes" . | toJson }}\n`;
    writeFileSync(join(chart, 'templates/notes.yaml'), wrapped);
    const r = await helmWithValues(
      tools,
      ['template', 'x', chart, '--show-only', 'templates/notes.yaml'],
      values,
    );
    assert.equal(r.code, 0, r.stderr);
    return (parse(r.stdout) as { notes: string }).notes;
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

/** Every value set the tests render: the defaults, and each group of values a user changes. */
export const VALUE_SETS: Record<string, object> = {
  defaults: {},
  'metrics and taint': {
    rbac: { taint: true },
    metrics: {
      service: { enabled: true },
      serviceMonitor: { enabled: true, additionalLabels: { release: 'kube-prometheus-stack' } },
      prometheusRule: {
        enabled: true,
        additionalRules: [{ alert: 'SiteNodeProblem', expr: 'max(problem_gauge) > 0', for: '1m' }],
      },
      dashboard: { enabled: true },
    },
  },
  'privileged, digest, scheduling': {
    privileged: true,
    image: { repository: 'registry.example.com/npd', digest: `sha256:${'a'.repeat(64)}` },
    priorityClassName: '',
    nodeSelector: { 'node-role.kubernetes.io/worker': '' },
    affinity: {
      nodeAffinity: {
        requiredDuringSchedulingIgnoredDuringExecution: {
          nodeSelectorTerms: [{ matchExpressions: [{ key: 'gpu', operator: 'DoesNotExist' }] }],
        },
      },
    },
    tolerations: [{ key: 'dedicated', operator: 'Equal', value: 'infra', effect: 'NoSchedule' }],
    updateStrategy: { type: 'RollingUpdate', rollingUpdate: { maxUnavailable: 1 } },
    resources: { requests: { cpu: '20m', memory: '128Mi' }, limits: { memory: '300Mi' } },
    hostNetwork: true,
  },
  'journald, node probes, gpu': {
    journald: { enabled: true },
    nodeProbes: { enabled: true },
    gpu: { enabled: true },
  },
  'gpu: GKE driver folder': { gpu: { enabled: true, driverRoot: '/home/kubernetes/bin/nvidia' } },
  'gpu: runtime class, GPU Operator driver root': {
    gpu: { enabled: true, runtimeClassName: 'nvidia', driverRoot: '/run/nvidia/driver' },
  },
  'custom monitors, extras': {
    monitors: {
      systemLog: ['kernel.yaml', 'hardware.yaml', 'my-filelog.json'],
      customPlugin: ['/custom/plugin.json'],
      probe: ['probes-daemonset.yaml'],
    },
    customMonitors: {
      'my-filelog.json': {
        plugin: 'filelog',
        pluginConfig: {
          timestamp: '^(\\S+)',
          message: '^\\S+ (.*)$',
          timestampFormat: '2006-01-02T15:04:05Z07:00',
        },
        logPath: '/host/var/log/my.log',
        lookback: '5m',
        bufferSize: 10,
        source: 'my-monitor',
        conditions: [],
        rules: [{ type: 'temporary', reason: 'MyProblem', pattern: 'my problem.*' }],
      },
    },
    extraArgs: ['--k8s-exporter-heartbeat-period=1m'],
    extraEnv: [{ name: 'LOG_LEVEL', value: 'debug' }],
    extraVolumes: [{ name: 'custom', configMap: { name: 'my-plugin' } }],
    extraVolumeMounts: [{ name: 'custom', mountPath: '/custom', readOnly: true }],
    serviceAccount: { annotations: { 'example.com/role': 'npd' } },
    podLabels: { team: 'infra' },
  },
};
