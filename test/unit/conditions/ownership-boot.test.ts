/**
 * A condition that only a reboot ends (a kernel oops, a hard lockup, a file system forced read-only)
 * must end at the reboot: the agent resumes the Node's conditions after a restart within one boot,
 * and not after a reboot (the boot ID of /proc/sys/kernel/random/boot_id changed).
 */
import assert from 'node:assert/strict';
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { BOOT_ANNOTATION, Ownership } from '../../../src/conditions/ownership.ts';
import type { Condition } from '../../../src/core/types.ts';
import { readBootId } from '../../../src/host/procfs/boot-id.ts';
import type { NodeSnapshot } from '../../../src/kube/client.ts';
import type { LogRuleConfig } from '../../../src/rules/config.ts';
import { engine, line, T0 } from '../rules/log-engine-helpers.ts';

const BOOT_A = '6e1f3c2a-8d4b-4f7e-9a1c-2b3d4e5f6a7b';
const BOOT_B = '0a9b8c7d-6e5f-4a3b-8c1d-0e9f8a7b6c5d';
const HARD_LOCKUP: LogRuleConfig = {
  type: 'permanent',
  condition: 'KernelDeadlock',
  reason: 'HardLockup',
  pattern: 'Watchdog detected hard LOCKUP on cpu \\d+.*',
};

/** The Node as the previous agent left it: its conditions and the annotations of its last patch. */
function nodeWith(conditions: readonly Condition[], annotations: Record<string, string>): NodeSnapshot {
  return {
    name: 'n1',
    uid: 'u1',
    annotations,
    taints: [],
    conditions: conditions.map((c) => ({
      type: c.type,
      status: c.status,
      reason: c.reason,
      message: c.message,
      lastTransitionTime: new Date(c.transition).toISOString().replace(/\.\d+Z$/, 'Z'),
    })),
  };
}

/** One agent run in `boot`: a hard lockup sets KernelDeadlock; the Node keeps what it published. */
function firstRun(boot: string | undefined): NodeSnapshot {
  const e = engine([HARD_LOCKUP]);
  e.process(line('watchdog: Watchdog detected hard LOCKUP on cpu 2'));
  const ownership = new Ownership(['KernelDeadlock'], boot);
  return nodeWith(e.conditions(), { ...ownership.extras().annotations });
}

/** The next agent start, at a later fake time, reading the Node back. */
function restart(node: NodeSnapshot, boot: string | undefined) {
  const ownership = new Ownership(['KernelDeadlock'], boot);
  const plan = ownership.plan(node);
  const e = engine([HARD_LOCKUP]);
  for (const c of plan.restore) e.restore(c);
  const deadlock = e.conditions().find((c) => c.type === 'KernelDeadlock');
  return { plan, deadlock, annotations: ownership.extras().annotations };
}

describe('conditions across a reboot (boot ID)', () => {
  it('resumes a condition after a restart within the same boot', () => {
    const { plan, deadlock } = restart(firstRun(BOOT_A), BOOT_A);
    assert.equal(deadlock?.status, 'True');
    assert.equal(deadlock?.reason, 'HardLockup');
    assert.equal(deadlock?.transition, T0 + 1000);
    assert.deepEqual(plan.endedAtBoot, []);
  });

  it('does not resume it after a reboot: the condition is published at its default again', () => {
    const { plan, deadlock, annotations } = restart(firstRun(BOOT_A), BOOT_B);
    assert.equal(deadlock?.status, 'False');
    assert.equal(deadlock?.reason, 'KernelHasNoDeadlock');
    assert.deepEqual(plan.restore, []);
    assert.deepEqual(
      plan.endedAtBoot.map((c) => [c.type, c.status, c.reason]),
      [['KernelDeadlock', 'True', 'HardLockup']],
    );
    assert.equal(annotations[BOOT_ANNOTATION], BOOT_B, 'the next patch records the new boot');
  });

  it('resumes when the boot cannot be told: no annotation yet, or no boot ID readable', () => {
    const older = firstRun(undefined);
    assert.equal(older.annotations[BOOT_ANNOTATION], undefined);
    assert.equal(restart(older, BOOT_B).deadlock?.status, 'True');
    assert.equal(restart(firstRun(BOOT_A), undefined).deadlock?.status, 'True');
  });

  it('keeps the event watermarks across a reboot', () => {
    const node = firstRun(BOOT_A);
    const annotations = { ...node.annotations, 'node-problem-detector.io/event-watermarks': '{"k":5}' };
    const { plan } = restart({ ...node, annotations }, BOOT_B);
    assert.deepEqual(plan.watermarks, { k: 5 });
  });
});

describe('readBootId', () => {
  async function procWith(text: string | undefined): Promise<string> {
    const root = await mkdtemp(join(tmpdir(), 'npd-boot-'));
    const dir = join(root, 'proc', 'sys', 'kernel', 'random');
    await mkdir(dir, { recursive: true });
    if (text !== undefined) await writeFile(join(dir, 'boot_id'), text);
    return root;
  }

  it('reads the UUID, and nothing from a missing or malformed file', async () => {
    const roots = await Promise.all([procWith(`${BOOT_A}\n`), procWith(undefined), procWith('not-a-uuid\n')]);
    try {
      const ids = await Promise.all(roots.map((r) => readBootId(join(r, 'proc'))));
      assert.deepEqual(ids, [BOOT_A, undefined, undefined]);
    } finally {
      await Promise.all(roots.map((r) => rm(r, { recursive: true, force: true })));
    }
  });
});
