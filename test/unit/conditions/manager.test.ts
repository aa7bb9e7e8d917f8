import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { ConditionManager } from '../../../src/conditions/manager.ts';
import { FakeClock } from '../../../src/core/clock.ts';
import { createRegistry } from '../../../src/core/metrics.ts';
import { advance, cond, setup, T0 } from './harness.ts';

describe('ConditionManager', () => {
  it('returns from start() at once and syncs all conditions on the first tick', async () => {
    const { clock, writer, manager } = setup();
    manager.update(
      cond('KernelDeadlock', 'False', T0 - 5_500, 'KernelHasNoDeadlock', 'kernel has no deadlock'),
    );
    manager.update(cond('ReadonlyFilesystem', 'False'));
    manager.start();
    assert.equal(writer.calls.length, 0);
    await advance(clock, 999, 999);
    assert.equal(writer.calls.length, 0);
    await advance(clock, 1, 1);
    assert.equal(writer.calls.length, 1);
    assert.deepEqual(writer.calls[0]?.conditions, [
      {
        type: 'KernelDeadlock',
        status: 'False',
        lastHeartbeatTime: '2026-01-01T12:00:01Z',
        lastTransitionTime: '2026-01-01T11:59:54Z',
        reason: 'KernelHasNoDeadlock',
        message: 'kernel has no deadlock',
      },
      {
        type: 'ReadonlyFilesystem',
        status: 'False',
        lastHeartbeatTime: '2026-01-01T12:00:01Z',
        lastTransitionTime: '2026-01-01T12:00:00Z',
        reason: 'R',
        message: 'm',
      },
    ]);
    manager.stop();
  });

  it('coalesces updates within a tick into one patch carrying the latest value per type', async () => {
    const { clock, writer, manager } = setup();
    manager.start();
    manager.update(cond('A', 'False'));
    manager.update(cond('A', 'True', T0 + 100, 'Boom'));
    await advance(clock, 400, 400);
    manager.update(cond('A', 'False', T0 + 500, 'Fine'));
    manager.update(cond('B', 'True'));
    await advance(clock, 600, 600);
    assert.equal(writer.calls.length, 1);
    assert.deepEqual(
      writer.calls[0]?.conditions.map((c) => [c.type, c.status, c.reason]),
      [
        ['A', 'False', 'Fine'],
        ['B', 'True', 'R'],
      ],
    );
    manager.stop();
  });

  it('does not sync when updates repeat the current values', async () => {
    const { clock, writer, manager } = setup();
    manager.update(cond('A', 'False'));
    manager.start();
    await advance(clock, 1000);
    assert.equal(writer.calls.length, 1);
    for (let i = 0; i < 30; i++) {
      manager.update(cond('A', 'False'));
      await advance(clock, 1000);
    }
    assert.equal(writer.calls.length, 1);
    manager.update(cond('A', 'False', T0, 'R', 'new message'));
    await advance(clock, 1000);
    assert.equal(writer.calls.length, 2);
    manager.stop();
  });

  it('sends a heartbeat with every condition once per heartbeat period', async () => {
    const { clock, writer, manager } = setup({ heartbeatPeriodMs: 60_000 });
    manager.update(cond('A', 'False', T0 - 3_600_000));
    manager.update(cond('B', 'True'));
    manager.start();
    await advance(clock, 1000);
    await advance(clock, 59_000);
    assert.equal(writer.calls.length, 1);
    await advance(clock, 1000);
    assert.equal(writer.calls.length, 2);
    const beat = writer.calls[1];
    assert.equal(beat?.at, T0 + 61_000);
    assert.deepEqual(
      beat?.conditions.map((c) => [c.type, c.lastHeartbeatTime, c.lastTransitionTime]),
      [
        ['A', '2026-01-01T12:01:01Z', '2026-01-01T11:00:00Z'],
        ['B', '2026-01-01T12:01:01Z', '2026-01-01T12:00:00Z'],
      ],
    );
    manager.stop();
  });

  it('uses the 5 minute heartbeat by default', async () => {
    const { clock, writer, manager } = setup();
    manager.update(cond('A', 'False'));
    manager.start();
    await advance(clock, 1000);
    await advance(clock, 299_000, 10_000);
    assert.equal(writer.calls.length, 1);
    await advance(clock, 1000);
    assert.equal(writer.calls.length, 2);
    manager.stop();
  });

  it('tracks conditions without writing when there is no writer', async () => {
    const clock = new FakeClock(T0);
    const manager = new ConditionManager({ writer: undefined, clock, registry: createRegistry() });
    manager.start();
    manager.update(cond('A', 'True'));
    assert.deepEqual(
      manager.conditions().map((c) => c.status),
      ['True'],
    );
    await advance(clock, 5000);
    manager.update(cond('A', 'False'));
    assert.deepEqual(
      manager.conditions().map((c) => c.status),
      ['False'],
    );
    assert.equal(manager.synced(), true);
    assert.equal(manager.lastSyncSuccess, undefined);
    manager.stop();
    assert.equal(clock.pendingTimers(), 0);
  });

  it('stops ticking after stop()', async () => {
    const { clock, writer, manager } = setup();
    manager.start();
    manager.stop();
    manager.update(cond('A', 'True'));
    await advance(clock, 5000);
    assert.equal(writer.calls.length, 0);
    assert.equal(clock.pendingTimers(), 0);
  });
});
