import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { helpText, parseOptions } from '../../../src/agent/options.ts';
import { nodeSnapshot } from '../../../src/kube/client.ts';
import { planTaints, TAINTS_ANNOTATION } from '../../../src/taints/plan.ts';
import { parseTaintRules } from '../../../src/taints/spec.ts';
import { RULE, T0 } from './harness.ts';

describe('--taint-on-condition', () => {
  it('is off by default', () => {
    const { options, errors } = parseOptions([], {}, 'host');
    assert.deepEqual(errors, []);
    assert.deepEqual(options.taintOnCondition, []);
    assert.match(helpText(), /--taint-on-condition/);
  });

  it('is repeatable and takes commas, like the other list flags', () => {
    const { options, errors } = parseOptions(
      [
        '--taint-on-condition=KernelDeadlock=node.npd.io/kernel-deadlock:NoSchedule',
        '--taint-on-condition',
        'KernelDeadlock=node.npd.io/kernel-deadlock:NoExecute,ReadonlyFilesystem=ro:PreferNoSchedule',
      ],
      {},
      'host',
    );
    assert.deepEqual(errors, []);
    assert.deepEqual(options.taintOnCondition, [
      { conditionType: 'KernelDeadlock', key: 'node.npd.io/kernel-deadlock', effect: 'NoSchedule' },
      { conditionType: 'KernelDeadlock', key: 'node.npd.io/kernel-deadlock', effect: 'NoExecute' },
      { conditionType: 'ReadonlyFilesystem', key: 'ro', effect: 'PreferNoSchedule' },
    ]);
  });

  it('rejects malformed specs, unknown effects, invalid keys and a taint with two owners', () => {
    const { rules, errors } = parseTaintRules([
      'KernelDeadlock',
      '=k:NoSchedule',
      'A=k',
      'A=k:Evict',
      'A=Bad_Prefix.io/k:NoSchedule',
      'A=k/-x:NoSchedule',
      `A=${'x'.repeat(64)}:NoSchedule`,
      'A=k:NoSchedule',
      'A=k:NoSchedule',
      'B=k:NoSchedule',
    ]);
    assert.deepEqual(rules, [{ conditionType: 'A', key: 'k', effect: 'NoSchedule' }]);
    assert.equal(errors.length, 8, errors.join('\n'));
    assert.match(errors[3] ?? '', /effect must be one of NoSchedule, PreferNoSchedule, NoExecute/);
    assert.match(errors[7] ?? '', /k:NoSchedule is claimed by both A and B/);
    const parsed = parseOptions(['--taint-on-condition=A=k:Evict'], {}, 'host');
    assert.equal(parsed.errors.length, 1);
  });

  it('rejects a kubelet-owned condition type, which the agent never writes (issue 39)', () => {
    const { rules, errors } = parseTaintRules([
      'Ready=node.npd.io/not-ready:NoSchedule',
      'MemoryPressure=node.npd.io/mem:NoSchedule',
      'KernelDeadlock=node.npd.io/kernel-deadlock:NoSchedule',
    ]);
    assert.equal(errors.length, 2, errors.join('\n'));
    assert.match(
      errors[0] ?? '',
      /"Ready=node.npd.io\/not-ready:NoSchedule": Ready is the kubelet's condition/,
    );
    assert.match(errors[1] ?? '', /MemoryPressure is the kubelet's condition/);
    assert.deepEqual(
      rules.map((r) => r.conditionType),
      ['KernelDeadlock'],
      'control: an agent-owned type is taken',
    );
  });
});

describe('planTaints', () => {
  const statuses = new Map([['KernelDeadlock', 'True' as const]]);

  it('guards the write with test ops on the taints and annotations as read', () => {
    const node = nodeSnapshot({ metadata: { name: 'n1' }, spec: {} });
    const plan = planTaints([RULE], statuses, node, T0);
    assert.deepEqual(plan.patch, [
      { op: 'test', path: '/spec/taints', value: null },
      { op: 'test', path: '/metadata/annotations', value: null },
      {
        op: 'add',
        path: '/metadata/annotations',
        value: { [TAINTS_ANNOTATION]: 'node.npd.io/kernel-deadlock:NoSchedule' },
      },
      { op: 'add', path: '/spec/taints', value: [{ key: RULE.key, value: 'true', effect: 'NoSchedule' }] },
    ]);
  });

  it('adds to an existing annotation list and stamps timeAdded on NoExecute taints', () => {
    const node = nodeSnapshot({
      metadata: { name: 'n1', annotations: { [TAINTS_ANNOTATION]: 'zz:NoSchedule' } },
      spec: { taints: [{ key: 'a', effect: 'NoSchedule' }] },
    });
    const rule = { ...RULE, effect: 'NoExecute' as const };
    const plan = planTaints([rule], statuses, node, T0 + 1_500);
    const path = '/metadata/annotations/node-problem-detector.io~1taints';
    assert.deepEqual(plan.patch, [
      { op: 'test', path: '/spec/taints', value: [{ key: 'a', effect: 'NoSchedule' }] },
      { op: 'test', path, value: 'zz:NoSchedule' },
      { op: 'add', path, value: 'node.npd.io/kernel-deadlock:NoExecute,zz:NoSchedule' },
      {
        op: 'add',
        path: '/spec/taints',
        value: [
          { key: 'a', effect: 'NoSchedule' },
          { key: RULE.key, value: 'true', effect: 'NoExecute', timeAdded: '2026-01-01T12:00:01Z' },
        ],
      },
    ]);
  });

  it('cleans a stale annotation entry when the taint is gone and the condition is False', () => {
    const node = nodeSnapshot({
      metadata: {
        name: 'n1',
        annotations: { [TAINTS_ANNOTATION]: 'node.npd.io/kernel-deadlock:NoSchedule' },
      },
      spec: {},
    });
    const plan = planTaints([RULE], new Map([['KernelDeadlock', 'False' as const]]), node, T0);
    const path = '/metadata/annotations/node-problem-detector.io~1taints';
    assert.deepEqual(plan.patch, [
      { op: 'test', path: '/spec/taints', value: null },
      { op: 'test', path, value: 'node.npd.io/kernel-deadlock:NoSchedule' },
      { op: 'remove', path },
    ]);
    assert.deepEqual([plan.added, plan.removed], [[], []]);
  });
});
