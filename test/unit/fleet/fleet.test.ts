import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { machineHealthCheck, matchesSelector, nodeHealthCheck } from '../../../src/fleet/consumers.ts';
import { humanDuration, table } from '../../../src/fleet/format.ts';
import { type FleetNode, nodeProblems } from '../../../src/fleet/problems.ts';
import { toAgentEvent, toNode } from '../../../src/fleet/read.ts';
import { renderFleet, renderJson, renderTimeline } from '../../../src/fleet/render.ts';
import { karpenterPolicies, repairsDue } from '../../../src/fleet/repair.ts';
import { reports } from '../../../src/fleet/view.ts';

const NOW = Date.UTC(2026, 11, 4, 12);
const MIN = 60_000;
const iso = (ms: number) => new Date(ms).toISOString();

function node(
  name: string,
  conditions: [string, string, number][],
  extra: Partial<FleetNode> = {},
): FleetNode {
  return {
    name,
    labels: {},
    annotations: {},
    providerID: '',
    conditions: conditions.map(([type, status, ago]) => ({
      type,
      status,
      reason: `${type}Reason`,
      message: `${type} message`,
      since: NOW - ago * MIN,
    })),
    ...extra,
  };
}

describe('fleet: one polarity', () => {
  it('NPD types are problems when True, *Ready when False, the kubelet Ready when not True', () => {
    const n = node('a', [
      ['KernelDeadlock', 'True', 1],
      ['ReadonlyFilesystem', 'False', 1],
      ['KernelReady', 'False', 1],
      ['StorageReady', 'True', 1],
      ['Ready', 'True', 1],
      ['MemoryPressure', 'True', 1],
      ['NTPProblem', 'Unknown', 1],
    ]);
    assert.deepEqual(
      nodeProblems(n).map((p) => `${p.type}=${p.status}/${p.problemWhen}`),
      [
        'KernelDeadlock=True/True',
        'KernelReady=False/False',
        'MemoryPressure=True/True',
        'NTPProblem=Unknown/True',
      ],
    );
    assert.deepEqual(
      nodeProblems(node('b', [['Ready', 'Unknown', 1]])).map((p) => p.problemWhen),
      ['False'],
    );
  });
});

describe('fleet: repair clocks', () => {
  it('Karpenter: by provider, only on nodes it launched', () => {
    const gcp = node('g', [], { labels: { 'karpenter.sh/nodepool': 'p' }, providerID: 'gce://proj/zone/g' });
    const aws = node('a', [], {
      labels: { 'karpenter.sh/nodepool': 'p' },
      providerID: 'aws:///us-east-1a/i-1',
    });
    const unmanaged = node('u', [], { providerID: 'aws:///us-east-1a/i-2' });
    assert.ok(karpenterPolicies(gcp).some((p) => p.type === 'KernelDeadlock' && p.afterMs === 5 * MIN));
    assert.ok(
      karpenterPolicies(aws).some((p) => p.type === 'AcceleratedHardwareReady' && p.afterMs === 10 * MIN),
    );
    assert.ok(!karpenterPolicies(aws).some((p) => p.type === 'KernelDeadlock'), 'AWS ignores NPD types');
    assert.deepEqual(karpenterPolicies(unmanaged), []);
  });

  it('a policy acts at lastTransitionTime + duration, on type and status exactly', () => {
    const [p] = nodeProblems(node('a', [['KernelDeadlock', 'True', 3]]));
    assert.ok(p);
    const policies = [
      { consumer: 'x', type: 'KernelDeadlock', status: 'True', afterMs: 5 * MIN },
      { consumer: 'y', type: 'KernelDeadlock', status: 'Unknown', afterMs: MIN },
      { consumer: 'z', type: 'KernelDeadlock', status: 'True', afterMs: MIN },
    ];
    assert.deepEqual(repairsDue(p, policies), [
      { consumer: 'z', dueAt: NOW - 2 * MIN },
      { consumer: 'x', dueAt: NOW + 2 * MIN },
    ]);
  });

  it('NodeHealthCheck: its selector, its conditions (Go durations), Ready 300 s by default, paused', () => {
    const nhc = nodeHealthCheck({
      metadata: { name: 'workers' },
      spec: {
        selector: { matchExpressions: [{ key: 'role', operator: 'In', values: ['worker'] }] },
        unhealthyConditions: [{ type: 'KernelDeadlock', status: 'True', duration: '2m30s' }],
      },
    });
    assert.deepEqual(nhc(node('w', [], { labels: { role: 'worker' } })), [
      { consumer: 'NodeHealthCheck/workers', type: 'KernelDeadlock', status: 'True', afterMs: 150_000 },
    ]);
    assert.deepEqual(nhc(node('c', [], { labels: { role: 'control-plane' } })), []);
    const byDefault = nodeHealthCheck({
      metadata: { name: 'd' },
      spec: { selector: {}, pauseRequests: ['x'] },
    });
    assert.deepEqual(
      byDefault(node('any', [])).map((p) => `${p.consumer} ${p.type}=${p.status} ${p.afterMs}`),
      ['NodeHealthCheck/d (paused) Ready=False 300000', 'NodeHealthCheck/d (paused) Ready=Unknown 300000'],
    );
  });

  it('MachineHealthCheck v1beta2: the nodes of its cluster, timeoutSeconds', () => {
    const mhc = machineHealthCheck({
      metadata: { name: 'm', namespace: 'ns' },
      spec: {
        clusterName: 'c1',
        checks: { unhealthyNodeConditions: [{ type: 'KernelReady', status: 'False', timeoutSeconds: 600 }] },
      },
    });
    const ours = { 'cluster.x-k8s.io/cluster-name': 'c1', 'cluster.x-k8s.io/cluster-namespace': 'ns' };
    assert.equal(mhc(node('n', [], { annotations: ours }))[0]?.afterMs, 600_000);
    assert.deepEqual(
      mhc(node('n', [], { annotations: { ...ours, 'cluster.x-k8s.io/cluster-name': 'c2' } })),
      [],
    );
  });

  it('label selectors: matchLabels and every operator; an unknown operator matches nothing', () => {
    const labels = { a: '1', b: '2' };
    assert.ok(matchesSelector({ matchLabels: { a: '1' } }, labels));
    assert.ok(!matchesSelector({ matchLabels: { a: '2' } }, labels));
    assert.ok(matchesSelector({ matchExpressions: [{ key: 'c', operator: 'DoesNotExist' }] }, labels));
    assert.ok(
      matchesSelector({ matchExpressions: [{ key: 'b', operator: 'NotIn', values: ['3'] }] }, labels),
    );
    assert.ok(!matchesSelector({ matchExpressions: [{ key: 'b', operator: 'Exists2' }] }, labels));
    assert.ok(matchesSelector({}, labels), 'an empty selector selects every node');
  });
});

describe('fleet: reading API objects', () => {
  it('a Node, and an event of the agent (not the kubelet’s, not another host’s)', () => {
    const n = toNode({
      metadata: { name: 'n1', labels: { x: 'y' } },
      spec: { providerID: 'gce://p/z/n1' },
      status: { conditions: [{ type: 'KernelDeadlock', status: 'True', lastTransitionTime: iso(NOW) }] },
    });
    assert.equal(n.conditions[0]?.since, NOW);
    const ev = (component: string, host: string) => ({
      involvedObject: { kind: 'Node', name: 'n1' },
      source: { component, host },
      type: 'Warning',
      reason: 'TaskHung',
      message: 'm',
      count: 3,
      lastTimestamp: iso(NOW),
    });
    assert.deepEqual(toAgentEvent(ev('kernel-monitor', 'n1')), {
      node: 'n1',
      type: 'Warning',
      reason: 'TaskHung',
      message: 'm',
      source: 'kernel-monitor',
      count: 3,
      at: NOW,
    });
    assert.equal(toAgentEvent(ev('kubelet', 'n1')), undefined);
    assert.equal(toAgentEvent(ev('kernel-monitor', 'n2')), undefined);
    const series = {
      involvedObject: { name: 'n1' },
      reportingComponent: 'kernel-monitor',
      reportingInstance: 'n1',
      eventTime: iso(NOW),
      series: { count: 7 },
    };
    assert.equal(toAgentEvent(series)?.count, 7);
  });

  it("an agent event's evidence annotation, shown in the node's timeline", () => {
    const raw = {
      metadata: { annotations: { 'node-problem-detector.io/evidence': 'kmsg/kernel' } },
      involvedObject: { kind: 'Node', name: 'n1' },
      source: { component: 'kernel-monitor', host: 'n1' },
      type: 'Warning',
      reason: 'TaskHung',
      message: 'm',
      count: 2,
      lastTimestamp: iso(NOW),
    };
    const event = toAgentEvent(raw);
    assert.equal(event?.evidence, 'kmsg/kernel');
    assert.equal('evidence' in (toAgentEvent({ ...raw, metadata: {} }) ?? {}), false, 'control: none');
    const report = { node: 'n1', problems: [], conditions: [], events: event ? [event] : [] };
    assert.match(renderTimeline(report, NOW), /Warning TaskHung \(kernel-monitor\) x2 \[kmsg\/kernel\]/);
  });
});

describe('fleet: output', () => {
  const state = {
    nodes: [
      node('b', [
        ['KernelReady', 'False', 2],
        ['Ready', 'True', 60],
      ]),
      node('a', [['KernelDeadlock', 'True', 10]], {
        labels: { 'karpenter.sh/nodepool': 'p' },
        providerID: 'gce://x',
      }),
      node('ok', [['KernelDeadlock', 'False', 60]]),
    ],
    events: [
      {
        node: 'b',
        type: 'Warning',
        reason: 'TaskHung',
        message: 'task x blocked',
        source: 'kernel-monitor',
        count: 2,
        at: NOW - MIN,
      },
    ],
    consumers: [],
    notes: [],
  };

  it('lists only the problems, sorted by node, with their repair clocks', () => {
    const text = renderFleet(reports(state), NOW, false);
    const lines = text.trim().split('\n');
    assert.match(lines[0] ?? '', /^NODE\s+PROBLEM\s+STATUS\s+REASON\s+AGE\s+REPAIR$/);
    assert.match(
      lines[1] ?? '',
      /^a\s+KernelDeadlock\s+True\s+KernelDeadlockReason\s+10m\s+karpenter \(gcp\) due 5m ago$/,
    );
    assert.match(lines[2] ?? '', /^b\s+KernelReady\s+False\s+KernelReadyReason\s+2m\s+-$/);
    assert.equal(lines.at(-1), '2 of 3 nodes have problems.');
    assert.match(renderFleet(reports(state), NOW, true), /LAST EVENT\n[\s\S]*TaskHung 60s ago/);
    assert.equal(
      renderFleet(reports({ ...state, nodes: [state.nodes[2] as FleetNode] }), NOW, false),
      'No problems on 1 nodes.\n',
    );
  });

  it('a node’s timeline: conditions and events in time order', () => {
    const b = reports(state).find((r) => r.node === 'b');
    assert.ok(b);
    const text = renderTimeline(b, NOW);
    const order = ['Ready=True', 'KernelReady=False (problem)', 'Warning TaskHung (kernel-monitor) x2'].map(
      (s) => text.indexOf(s),
    );
    assert.ok(
      order.every((i, k) => i > 0 && (k === 0 || i > (order[k - 1] ?? 0))),
      text,
    );
  });

  it('JSON carries the polarity and seconds until each repair (negative: overdue)', () => {
    const json = JSON.parse(renderJson(reports(state), NOW)) as {
      nodes: { name: string; problems: { problemWhen: string; repairs: { dueInSeconds: number }[] }[] }[];
    };
    const a = json.nodes.find((n) => n.name === 'a');
    assert.equal(a?.problems[0]?.problemWhen, 'True');
    assert.equal(a?.problems[0]?.repairs[0]?.dueInSeconds, -300);
  });

  it('ages read as kubectl prints them', () => {
    assert.deepEqual(
      [45e3, 312e3, 47 * MIN, 200 * MIN, 30 * 60 * MIN, 126 * 60 * MIN, 40 * 1440 * MIN].map(humanDuration),
      ['45s', '5m12s', '47m', '3h20m', '30h', '5d6h', '40d'],
    );
    assert.equal(table(['A', 'BB'], [['xyz', '1']]), 'A     BB\nxyz   1\n');
  });
});
