import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { ApiError } from '../../../src/kube/errors.ts';
import { advance, cond, metricValue, setup, T0 } from './harness.ts';

const at = (r: number) => () => r;
const times = (calls: { at: number }[]) => calls.map((c) => c.at - T0);

describe('ConditionManager jitter (issue 41)', () => {
  it('waits up to 5 s for its first sync, drawn from the injected random', async () => {
    for (const [r, first] of [
      [0, 1000],
      [0.5, 3000],
      [0.99, 5000],
    ] as const) {
      const { clock, writer, manager } = setup({ random: at(r) });
      manager.update(cond('A', 'False'));
      manager.start();
      await advance(clock, 6000);
      assert.deepEqual(times(writer.calls), [first], `random ${r}`);
      manager.stop();
    }
  });

  it('brings the heartbeat after a start or a change up to half a period forward, the others up to 4 %', async () => {
    const { clock, writer, manager } = setup({
      random: at(0.5),
      startJitterMs: 0,
      heartbeatPeriodMs: 100_000,
    });
    manager.update(cond('A', 'False'));
    manager.start();
    await advance(clock, 1000 + 75_000 + 98_000 + 98_000);
    assert.deepEqual(times(writer.calls), [1000, 76_000, 174_000, 272_000]);
    manager.update(cond('A', 'True', T0 + 272_000));
    await advance(clock, 1000 + 75_000);
    assert.deepEqual(
      times(writer.calls).slice(4),
      [273_000, 348_000],
      'a change draws the wide jitter again',
    );
    manager.stop();
  });

  it('never heartbeats later than the period, whatever the random', async () => {
    const { clock, writer, manager } = setup({ random: at(0.999_999), heartbeatPeriodMs: 60_000 });
    manager.update(cond('A', 'False'));
    manager.start();
    await advance(clock, 600_000);
    const gaps = times(writer.calls)
      .slice(1)
      .map((t, i) => t - (times(writer.calls)[i] ?? 0));
    assert.ok(gaps.length >= 10);
    for (const gap of gaps) assert.ok(gap <= 60_000 && gap >= 30_000, `gap ${gap}`);
  });
});

describe('ConditionManager during an outage (issue 41)', () => {
  it('backs off 10, 10, 20, 40 s and no more, and a flapping condition adds no attempt', async () => {
    const { clock, writer, manager, registry } = setup();
    writer.failWith = new ApiError('connect ECONNREFUSED');
    manager.update(cond('A', 'False'));
    manager.start();
    for (let s = 0; s < 180; s++) {
      manager.update(cond('A', s % 2 ? 'True' : 'False', T0 + s * 1000, `flip${s}`));
      await advance(clock, 1000);
    }
    assert.deepEqual(times(writer.calls), [1000, 11_000, 21_000, 41_000, 81_000, 121_000, 161_000]);
    assert.equal(await metricValue(registry, 'npd_condition_resyncs_total'), 6);
    manager.stop();
  });

  it('writes the state of now once the server is back: a condition raised and cleared meanwhile ends False', async () => {
    const { clock, writer, manager } = setup({ random: at(0.7), heartbeatPeriodMs: 300_000 });
    manager.update(cond('KernelDeadlock', 'False'));
    manager.start();
    await advance(clock, 10_000);
    assert.equal(writer.calls.length, 1);
    writer.failWith = new ApiError('connect ECONNREFUSED');
    manager.update(cond('KernelDeadlock', 'True', T0 + 10_000, 'DockerHung'));
    await advance(clock, 60_000);
    manager.update(cond('KernelDeadlock', 'False', T0 + 70_000, 'KernelHasNoDeadlock'));
    await advance(clock, 60_000);
    writer.failWith = undefined;
    const before = writer.calls.length;
    await advance(clock, 61_000);
    const after = writer.calls.slice(before);
    assert.equal(after.length, 1, 'one write on return, within the longest backoff');
    assert.deepEqual(
      after[0]?.conditions.map((c) => [c.type, c.status, c.reason]),
      [['KernelDeadlock', 'False', 'KernelHasNoDeadlock']],
    );
    assert.deepEqual(
      manager.conditions().map((c) => c.status),
      ['False'],
    );
    manager.stop();
  });

  it('429 with Retry-After: 5 forever: at most one PATCH per 5 s, then backed off further', async () => {
    const { clock, writer, manager } = setup({ random: at(0.5) });
    writer.failWith = new ApiError('429 TooManyRequests', 429, 'TooManyRequests', 5000);
    manager.update(cond('A', 'True'));
    manager.start();
    await advance(clock, 600_000);
    const t = times(writer.calls);
    const gaps = t.slice(1).map((x, i) => x - (t[i] ?? 0));
    assert.ok(gaps.every((g) => g >= 5000));
    assert.ok(writer.calls.length <= 600 / 5, `${writer.calls.length} attempts in 10 min`);
    assert.ok(writer.calls.length <= 15, `${writer.calls.length}: the backoff, 40-60 s, is longer than 5 s`);
    manager.stop();
  });

  it('a Retry-After longer than the backoff is honoured, capped at 60 s and jittered', async () => {
    const { clock, writer, manager } = setup({ random: at(0.5) });
    writer.failWith = new ApiError('429 TooManyRequests', 429, 'TooManyRequests', 3_600_000);
    manager.update(cond('A', 'True'));
    manager.start();
    await advance(clock, 200_000);
    const t = times(writer.calls);
    assert.deepEqual(
      t.slice(1).map((x, i) => x - (t[i] ?? 0)),
      [75_000, 75_000],
      'an hour asked, 60 s + 25 % jitter waited',
    );
    manager.stop();
  });
});
