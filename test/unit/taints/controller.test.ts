import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { ApiError } from '../../../src/kube/errors.ts';
import { TAINTS_ANNOTATION } from '../../../src/taints/plan.ts';
import { cond, KEY, NOT_READY, OURS, setup } from './harness.ts';

const OUR_TAINT = { key: KEY, value: 'true', effect: 'NoSchedule' };

describe('TaintController', () => {
  it('adds the taint while the condition is True and records it in the annotation', async () => {
    const { api, controller, advance, added } = setup();
    controller.observe(cond('True'));
    await advance();
    assert.deepEqual(api.taints, [NOT_READY, OUR_TAINT]);
    assert.deepEqual(api.annotations, { [TAINTS_ANNOTATION]: OURS });
    assert.equal(await added(), 1);
    assert.deepEqual(
      api.calls.map((c) => [c.method, c.query]),
      [
        ['GET', { resourceVersion: '0' }],
        ['PATCH', undefined],
      ],
    );
    controller.stop();
  });

  it('removes its taint on False and on Unknown, and drops the annotation entry', async () => {
    const { api, controller, advance, added, removed } = setup({ annotations: { other: 'kept' } });
    for (const off of ['False', 'Unknown'] as const) {
      controller.observe(cond('True'));
      await advance();
      assert.deepEqual(api.taints, [NOT_READY, OUR_TAINT]);
      controller.observe(cond(off));
      await advance();
      assert.deepEqual(api.taints, [NOT_READY], off);
      assert.deepEqual(api.annotations, { other: 'kept' }, off);
    }
    assert.equal(await added(), 2);
    assert.equal(await removed(), 2);
    controller.stop();
  });

  it('does nothing before a managed condition is reported, and ignores other condition types', async () => {
    const { api, controller, advance } = setup();
    controller.observe(cond('True', 'ReadonlyFilesystem'));
    await advance(10 * 60_000);
    assert.equal(api.calls.length, 0);
    controller.stop();
  });

  it('waits for the startup hold, so a restored True does not flap a taint it added before a restart', async () => {
    let resume = () => {};
    const hold = new Promise<void>((resolve) => {
      resume = resolve;
    });
    const { api, controller, advance } = setup({
      taints: [NOT_READY, OUR_TAINT],
      annotations: { [TAINTS_ANNOTATION]: OURS },
      extra: { hold },
    });
    controller.observe(cond('False'));
    await advance(60_000);
    assert.equal(api.calls.length, 0);
    controller.observe(cond('True'));
    resume();
    await advance();
    assert.deepEqual(api.taints, [NOT_READY, OUR_TAINT]);
    assert.deepEqual(api.patches(), []);
    controller.stop();
  });

  it('never touches foreign taints, including one with our key and another effect', async () => {
    const foreign = [
      {
        key: 'example.com/maintenance',
        value: 'keep',
        effect: 'NoExecute',
        timeAdded: '2025-12-31T00:00:00Z',
      },
      { key: KEY, value: 'theirs', effect: 'PreferNoSchedule' },
    ];
    const { api, controller, advance, removed } = setup({ taints: foreign });
    controller.observe(cond('True'));
    await advance();
    assert.deepEqual(api.taints, [...foreign, OUR_TAINT]);
    controller.observe(cond('False'));
    await advance();
    assert.deepEqual(api.taints, foreign);
    assert.equal(await removed(), 1);
    controller.stop();
  });

  it('leaves a same key and effect taint it did not add alone, even with our value', async () => {
    const theirs = [{ key: KEY, value: 'true', effect: 'NoSchedule' }];
    const { api, controller, advance, added, removed } = setup({ taints: theirs });
    controller.observe(cond('True'));
    await advance();
    controller.observe(cond('False'));
    await advance();
    assert.deepEqual(api.taints, theirs);
    assert.deepEqual(api.patches(), [], 'no write at all');
    assert.equal(await added(), 0);
    assert.equal(await removed(), 0);
    controller.stop();
  });

  it('gives up a taint whose value someone changed: kept on False, annotation entry dropped', async () => {
    const { api, controller, advance } = setup();
    controller.observe(cond('True'));
    await advance();
    api.setTaints([NOT_READY, { key: KEY, value: 'maintenance', effect: 'NoSchedule' }]);
    controller.observe(cond('False'));
    await advance();
    assert.deepEqual(api.taints, [NOT_READY, { key: KEY, value: 'maintenance', effect: 'NoSchedule' }]);
    assert.deepEqual(api.annotations, {});
    controller.stop();
  });

  it('is idempotent: an already tainted Node gets no PATCH, and a resync only reads', async () => {
    const { api, controller, advance } = setup({
      taints: [OUR_TAINT],
      annotations: { [TAINTS_ANNOTATION]: OURS },
    });
    controller.observe(cond('True'));
    controller.observe(cond('True'));
    await advance();
    assert.equal(api.calls.length, 1);
    await advance(60_000);
    assert.deepEqual(
      api.calls.map((c) => c.method),
      ['GET', 'GET'],
    );
    controller.stop();
  });

  it('re-adds its taint at the resync when someone removed it while the condition is True', async () => {
    const { api, controller, advance, added } = setup();
    controller.observe(cond('True'));
    await advance();
    api.setTaints([NOT_READY]);
    await advance(59_999);
    assert.deepEqual(api.taints, [NOT_READY]);
    await advance(1);
    assert.deepEqual(api.taints, [NOT_READY, OUR_TAINT]);
    assert.equal(await added(), 2);
    controller.stop();
  });

  it('on a conflict (422 from the test op) re-reads with a quorum read and retries', async () => {
    const { api, controller, advance, failed } = setup();
    const late = { key: 'example.com/late', effect: 'NoSchedule' };
    api.beforePatch = (node) => {
      api.beforePatch = undefined;
      (node.spec as { taints: unknown[] }).taints.push(late);
    };
    controller.observe(cond('True'));
    await advance();
    assert.deepEqual(api.taints, [NOT_READY, late, OUR_TAINT]);
    assert.deepEqual(
      api.calls.map((c) => [c.method, c.query?.resourceVersion]),
      [
        ['GET', '0'],
        ['PATCH', undefined],
        ['GET', undefined],
        ['PATCH', undefined],
      ],
    );
    assert.equal(await failed(), 0);
    controller.stop();
  });

  it('retries a 409 Conflict the same way', async () => {
    const { api, controller, advance, failed } = setup();
    api.failures.push(undefined, new ApiError('conflict', 409, 'Conflict'));
    controller.observe(cond('True'));
    await advance();
    assert.deepEqual(api.taints, [NOT_READY, OUR_TAINT]);
    assert.equal(api.patches().length, 2);
    assert.equal(await failed(), 0);
    controller.stop();
  });

  it('counts a failure when conflicts outlast the quick attempts, then backs off', async () => {
    const { api, controller, advance, failed } = setup({ extra: { quickAttempts: 3 } });
    api.beforePatch = (node) => {
      (node.spec as { taints: unknown[] }).taints.push({
        key: `x/${api.calls.length}`,
        effect: 'NoSchedule',
      });
    };
    controller.observe(cond('True'));
    await advance();
    assert.equal(api.patches().length, 3);
    assert.equal(await failed(), 1);
    api.beforePatch = undefined;
    await advance(1_000);
    assert.equal(await failed(), 1);
    assert.ok(api.taints.some((t) => t.key === KEY));
    controller.stop();
  });
});
