// Issue 39 item 2: the agent never deletes or overwrites a condition it did not write. Stale types
// come only from the managed-conditions annotation, and never include a kubelet type, even one an
// older version recorded there; the condition manager never sends one.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { KubeNodeStatusWriter } from '../../../src/conditions/node-status-writer.ts';
import { MANAGED_ANNOTATION, Ownership } from '../../../src/conditions/ownership.ts';
import { RESERVED_CONDITION_TYPES } from '../../../src/core/reserved-conditions.ts';
import type { NodeSnapshot } from '../../../src/kube/client.ts';
import { advance, cond, setup } from './harness.ts';

const KUBELET_ROWS = ['Ready', 'MemoryPressure', 'DiskPressure', 'PIDPressure', 'NetworkUnavailable'];

/** A Node with the kubelet's rows, `ours` beside them, and the annotation an earlier agent left. */
function node(ours: readonly string[], managed: readonly string[]): NodeSnapshot {
  return {
    name: 'n1',
    uid: 'u1',
    taints: [],
    annotations: { [MANAGED_ANNOTATION]: JSON.stringify(managed) },
    conditions: [...KUBELET_ROWS, ...ours].map((type) => ({
      type,
      status: type === 'Ready' ? 'True' : 'False',
      reason: 'R',
      message: 'm',
      lastTransitionTime: '2026-01-01T12:00:00Z',
    })),
  };
}

/** The body the status writer would send with `ownership`'s extras. */
async function patchBody(ownership: Ownership): Promise<Record<string, unknown>> {
  let body: Record<string, unknown> = {};
  const client = {
    patchNodeStatus: async (_name: string, b: Record<string, unknown>) => {
      body = b;
      return { name: 'n1', uid: 'u1', annotations: {}, taints: [], conditions: [] };
    },
  };
  await new KubeNodeStatusWriter(client, 'n1').patchConditions([], ownership.extras());
  return body;
}

describe('ownership never deletes a condition the agent did not write', () => {
  it('a kubelet type an older version recorded as managed is not deleted; the dropped own type is', async () => {
    const ownership = new Ownership(['KernelDeadlock']);
    const plan = ownership.plan(node(['OldProblem'], ['Ready', 'MemoryPressure', 'OldProblem']));
    assert.deepEqual(plan.stale, ['OldProblem'], 'control: the type we dropped is deleted');
    const body = (await patchBody(ownership)) as { status: { conditions: { type: string }[] } };
    assert.deepEqual(
      body.status.conditions.map((c) => c.type),
      ['OldProblem'],
    );
  });

  it('a type the annotation does not record is never deleted, though the Node shows it', () => {
    const ownership = new Ownership(['KernelDeadlock']);
    const plan = ownership.plan(node(['SomeoneElsesProblem'], ['KernelDeadlock']));
    assert.deepEqual(plan.stale, []);
    assert.deepEqual(ownership.extras().deleteTypes, []);
  });

  it('a kubelet type is never managed: not resumed, not recorded, not deleted when a reload drops it', () => {
    const ownership = new Ownership(['KernelDeadlock', ...RESERVED_CONDITION_TYPES]);
    const plan = ownership.plan(node(['KernelDeadlock'], []));
    assert.deepEqual(
      plan.restore.map((c) => c.type),
      ['KernelDeadlock'],
      'control: our own type is resumed',
    );
    assert.equal(ownership.extras().annotations[MANAGED_ANNOTATION], '["KernelDeadlock"]');
    ownership.configure([]);
    assert.deepEqual(ownership.extras().deleteTypes, ['KernelDeadlock'], 'only our own type is dropped');
  });
});

describe('the condition manager never writes a kubelet type', () => {
  it('an update of Ready or MemoryPressure is ignored; KernelDeadlock beside them is written', async () => {
    const { clock, writer, manager } = setup();
    manager.update(cond('Ready', 'False'));
    manager.update(cond('MemoryPressure', 'True'));
    manager.update(cond('KernelDeadlock', 'True'));
    manager.start();
    await advance(clock, 1000);
    assert.deepEqual(
      writer.calls.map((c) => c.conditions.map((x) => x.type)),
      [['KernelDeadlock']],
    );
    assert.deepEqual(
      manager.conditions().map((c) => c.type),
      ['KernelDeadlock'],
    );
    manager.stop();
  });

  it('whatever the publishes predicate says', async () => {
    const { clock, writer, manager } = setup({ publishes: () => true });
    for (const type of RESERVED_CONDITION_TYPES) manager.update(cond(type, 'True'));
    manager.update(cond('KernelDeadlock', 'False'));
    manager.start();
    await advance(clock, 1000);
    assert.deepEqual(
      writer.calls.map((c) => c.conditions.map((x) => x.type)),
      [['KernelDeadlock']],
    );
    manager.stop();
  });
});
