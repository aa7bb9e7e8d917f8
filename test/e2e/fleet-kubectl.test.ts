// The fleet view (issue 39 §6) against the real kube-apiserver, run as a kubectl plugin by the real
// kubectl: `kubectl npd` finds deploy/kubectl-plugin/kubectl-npd on PATH, which runs the agent's
// `fleet` command. Nodes carry conditions of both polarities, a Karpenter-launched GCP node and a
// NodeHealthCheck select some of them, and an agent event names one as its host.
import assert from 'node:assert/strict';
import { chmodSync, mkdirSync, symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { pathToFileURL } from 'node:url';
import { type ControlPlane, KUBECTL, REPO_ROOT, startControlPlane } from './harness/controlplane.ts';
import { run } from './harness/processes.ts';
import { workDir } from './support.ts';

const MIN = 60_000;
const iso = (ms: number) => new Date(ms).toISOString().replace(/\.\d{3}Z$/, 'Z');

/** A minimal NodeHealthCheck CRD: the fleet view only lists the objects (group, version, plural). */
const NHC_CRD = {
  apiVersion: 'apiextensions.k8s.io/v1',
  kind: 'CustomResourceDefinition',
  metadata: { name: 'nodehealthchecks.remediation.medik8s.io' },
  spec: {
    group: 'remediation.medik8s.io',
    scope: 'Cluster',
    names: { plural: 'nodehealthchecks', singular: 'nodehealthcheck', kind: 'NodeHealthCheck' },
    versions: [
      {
        name: 'v1alpha1',
        served: true,
        storage: true,
        schema: { openAPIV3Schema: { type: 'object', 'x-kubernetes-preserve-unknown-fields': true } },
      },
    ],
  },
};

describe('kubectl npd (the fleet view) on a real API server', () => {
  let cp: ControlPlane;
  const dir = workDir();
  const bin = join(dir, 'bin');
  const now = Date.now();

  before(
    async () => {
      cp = await startControlPlane();
      installPlugin();
      await node('npd-fleet-gcp', { 'karpenter.sh/nodepool': 'default' }, 'gce://p/z/npd-fleet-gcp', [
        ['KernelDeadlock', 'True', 'DockerHung', 10],
      ]);
      await node('npd-fleet-worker', { role: 'worker' }, '', [
        ['KernelReady', 'False', 'TaskHung', 2],
        ['ReadonlyFilesystem', 'False', 'FilesystemIsNotReadOnly', 60],
      ]);
      await must('POST', '/apis/apiextensions.k8s.io/v1/customresourcedefinitions', NHC_CRD);
      await waitForCrd();
      await must('POST', '/apis/remediation.medik8s.io/v1alpha1/nodehealthchecks', {
        apiVersion: 'remediation.medik8s.io/v1alpha1',
        kind: 'NodeHealthCheck',
        metadata: { name: 'workers' },
        spec: {
          selector: { matchLabels: { role: 'worker' } },
          minHealthy: '51%',
          unhealthyConditions: [{ type: 'KernelReady', status: 'False', duration: '10m' }],
        },
      });
      await must('POST', '/api/v1/namespaces/default/events', {
        metadata: { name: 'npd-fleet-worker.taskhung' },
        involvedObject: { apiVersion: 'v1', kind: 'Node', name: 'npd-fleet-worker', uid: 'npd-fleet-worker' },
        source: { component: 'kernel-monitor', host: 'npd-fleet-worker' },
        type: 'Warning',
        reason: 'TaskHung',
        message: 'INFO: task jbd2/sda1-8:512 blocked for more than 120 seconds.',
        count: 3,
        firstTimestamp: iso(now - 3 * MIN),
        lastTimestamp: iso(now - MIN),
      });
    },
    { timeout: 60 * 60_000 },
  );

  after(async () => {
    await cp?.stop();
  });

  async function must(method: string, path: string, body: unknown): Promise<void> {
    const r = await cp.request(method, path, { body });
    assert.ok([200, 201].includes(r.status), `${method} ${path}: ${r.status} ${r.text}`);
  }

  async function waitForCrd(): Promise<void> {
    for (let i = 0; i < 100; i++) {
      const r = await cp.request('GET', '/apis/remediation.medik8s.io/v1alpha1/nodehealthchecks');
      if (r.status === 200) return;
      await new Promise((res) => setTimeout(res, 200));
    }
    assert.fail('the NodeHealthCheck CRD was never served');
  }

  /** A Node with conditions `[type, status, reason, minutes since the transition]`. */
  async function node(
    name: string,
    labels: Record<string, string>,
    providerID: string,
    conditions: [string, string, string, number][],
  ): Promise<void> {
    await must('POST', '/api/v1/nodes', { metadata: { name, labels }, spec: { providerID } });
    const status = conditions.map(([type, s, reason, ago]) => ({
      type,
      status: s,
      reason,
      message: `${reason} on ${name}`,
      lastTransitionTime: iso(now - ago * MIN),
      lastHeartbeatTime: iso(now),
    }));
    await must('PATCH', `/api/v1/nodes/${name}/status`, { status: { conditions: status } });
  }

  /** kubectl-npd and a node-problem-detector command (this checkout, through tsx) in a PATH folder. */
  function installPlugin(): void {
    mkdirSync(bin);
    symlinkSync(join(REPO_ROOT, 'deploy/kubectl-plugin/kubectl-npd'), join(bin, 'kubectl-npd'));
    const npd = join(bin, 'node-problem-detector');
    const main = join(REPO_ROOT, 'src/main.ts');
    const tsx = pathToFileURL(join(REPO_ROOT, 'node_modules/tsx/dist/loader.mjs')).href;
    writeFileSync(npd, `#!/bin/sh\nexec "${process.execPath}" --import "${tsx}" "${main}" "$@"\n`);
    chmodSync(npd, 0o755);
  }

  const kubectl = (args: string[], env: Record<string, string> = {}) =>
    run(KUBECTL, args, {
      env: { ...process.env, PATH: `${bin}:${process.env.PATH}`, KUBECONFIG: cp.adminKubeconfig, ...env },
      timeoutMs: 60_000,
    });

  test('kubectl finds the plugin on PATH', async () => {
    const r = await kubectl(['plugin', 'list']);
    assert.match(r.stdout, /kubectl-npd/, r.stderr);
  });

  test('kubectl npd lists only the nodes with problems, one polarity, with the repair clocks', async () => {
    const r = await kubectl(['npd']);
    assert.equal(r.code, 0, r.stderr);
    const lines = r.stdout.trim().split('\n');
    assert.match(lines[0] ?? '', /^NODE\s+PROBLEM\s+STATUS\s+REASON\s+AGE\s+REPAIR$/);
    assert.match(
      r.stdout,
      /npd-fleet-gcp\s+KernelDeadlock\s+True\s+DockerHung\s+10m\s+karpenter \(gcp\) due 5m/,
    );
    assert.match(
      r.stdout,
      /npd-fleet-worker\s+KernelReady\s+False\s+TaskHung\s+2m\S*\s+NodeHealthCheck\/workers in 7m/,
    );
    assert.doesNotMatch(r.stdout, /ReadonlyFilesystem/, 'False is healthy for an NPD type');
    assert.doesNotMatch(r.stdout, /npd-e2e-node/, 'a healthy node is not listed');
    assert.equal(lines.at(-1), '2 of 3 nodes have problems.');
  });

  test('-o wide adds the message and the last agent event; --kubeconfig works as a flag', async () => {
    const r = await kubectl(['npd', '-o', 'wide', `--kubeconfig=${cp.adminKubeconfig}`], { KUBECONFIG: '' });
    assert.equal(r.code, 0, r.stderr);
    assert.match(r.stdout, /MESSAGE\s+LAST EVENT/);
    assert.match(r.stdout, /TaskHung on npd-fleet-worker\s+TaskHung \d+s ago/);
  });

  test('-o json: polarity and seconds until each repair', async () => {
    const r = await kubectl(['npd', '-o', 'json']);
    assert.equal(r.code, 0, r.stderr);
    const json = JSON.parse(r.stdout) as {
      nodes: {
        name: string;
        problems: {
          type: string;
          problemWhen: string;
          repairs: { consumer: string; dueInSeconds: number }[];
        }[];
      }[];
    };
    const worker = json.nodes.find((n) => n.name === 'npd-fleet-worker');
    assert.equal(worker?.problems[0]?.problemWhen, 'False');
    const due = worker?.problems[0]?.repairs[0];
    assert.equal(due?.consumer, 'NodeHealthCheck/workers');
    assert.ok(due && due.dueInSeconds > 400 && due.dueInSeconds <= 480, JSON.stringify(due));
  });

  test('a node argument gives its timeline; an unknown node or output fails', async () => {
    const r = await kubectl(['npd', 'npd-fleet-worker']);
    assert.equal(r.code, 0, r.stderr);
    const at = (s: string) => r.stdout.indexOf(s);
    // Transitions 60 and 2 minutes ago, the event's last occurrence 1 minute ago: in that order.
    assert.ok(at('ReadonlyFilesystem=False') < at('KernelReady=False (problem)'), r.stdout);
    assert.ok(at('KernelReady=False (problem)') < at('TaskHung (kernel-monitor) x3'), r.stdout);
    assert.match(r.stdout, /KernelReady\s+False\s+NodeHealthCheck\/workers in 7m/);
    const missing = await kubectl(['npd', 'no-such-node']);
    assert.equal(missing.code, 1);
    assert.match(missing.stderr, /node "no-such-node" not found/);
    const bad = await kubectl(['npd', '-o', 'yaml']);
    assert.equal(bad.code, 2);
    assert.match(bad.stderr, /-o: "yaml" is not wide or json/);
  });
});
