import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { Condition } from '../../../src/core/types.ts';
import { ApiError } from '../../../src/kube/errors.ts';
import { advance, cond, metricValue, setup, T0 } from './harness.ts';

describe('ConditionManager when syncs fail', () => {
  it('resyncs 10 s after a failed sync, not before', async () => {
    const { clock, writer, manager, registry } = setup();
    writer.failWith = new ApiError('connect ECONNREFUSED');
    manager.update(cond('A', 'True'));
    manager.start();
    await advance(clock, 1000);
    assert.deepEqual(
      writer.calls.map((c) => c.at - T0),
      [1000],
    );
    await advance(clock, 9000);
    assert.equal(writer.calls.length, 1, 'nothing changed, so no attempt before the resync');
    await advance(clock, 1000);
    assert.deepEqual(
      writer.calls.map((c) => c.at - T0),
      [1000, 11000],
    );
    writer.failWith = undefined;
    await advance(clock, 10_000);
    assert.deepEqual(
      writer.calls.map((c) => c.at - T0),
      [1000, 11000, 21000],
    );
    await advance(clock, 30_000);
    assert.equal(writer.calls.length, 3, 'no resync after a success');
    assert.equal(await metricValue(registry, 'npd_condition_sync_total', { result: 'failure' }), 2);
    assert.equal(await metricValue(registry, 'npd_condition_sync_total', { result: 'success' }), 1);
    assert.equal(
      await metricValue(registry, 'npd_condition_last_sync_timestamp_seconds'),
      (T0 + 21_000) / 1000,
    );
    manager.stop();
  });

  it('writes only the latest value per type when the server comes back', async () => {
    const { clock, writer, manager } = setup();
    writer.failWith = new ApiError('socket hang up');
    manager.update(cond('A', 'False'));
    manager.update(cond('B', 'False'));
    manager.start();
    const flips: Condition['status'][] = ['True', 'False', 'True', 'False', 'True'];
    for (const [i, status] of flips.entries()) {
      manager.update(cond('A', status, T0 + i * 7000, `flip${i}`));
      await advance(clock, 7000);
    }
    writer.failWith = undefined;
    const before = writer.calls.length;
    await advance(clock, 10_000);
    const recovered = writer.calls.slice(before);
    assert.equal(recovered.length, 1);
    assert.deepEqual(
      recovered[0]?.conditions.map((c) => [c.type, c.status, c.reason]),
      [
        ['A', 'True', 'flip4'],
        ['B', 'False', 'R'],
      ],
    );
    manager.stop();
  });

  it('retries a failed patch quickly before waiting for the resync', async () => {
    const { clock, writer, manager, registry } = setup({ quickAttempts: 5 });
    writer.failWith = new ApiError('GET: 503 ServiceUnavailable', 503);
    manager.update(cond('A', 'True'));
    manager.start();
    await advance(clock, 1000);
    await advance(clock, 100, 5);
    assert.deepEqual(
      writer.calls.map((c) => c.at - T0),
      [1000, 1010, 1020, 1030, 1040],
    );
    assert.equal(await metricValue(registry, 'npd_condition_sync_retries_total'), 4);
    assert.equal(await metricValue(registry, 'npd_condition_sync_total', { result: 'failure' }), 1);
    manager.stop();
  });

  it('does not retry 4xx answers quickly', async () => {
    const { clock, writer, manager } = setup({ quickAttempts: 5 });
    writer.failWith = new ApiError('PATCH: 403 Forbidden', 403, 'Forbidden');
    manager.update(cond('A', 'True'));
    manager.start();
    await advance(clock, 1000);
    await advance(clock, 100, 5);
    assert.equal(writer.calls.length, 1);
    manager.stop();
  });

  it('holds off for Retry-After when it is longer than the resync period', async () => {
    const { clock, writer, manager } = setup();
    writer.failWith = new ApiError('429 TooManyRequests', 429, 'TooManyRequests', 30_000);
    manager.update(cond('A', 'True'));
    manager.start();
    await advance(clock, 1000);
    manager.update(cond('A', 'False'));
    await advance(clock, 29_000);
    assert.equal(writer.calls.length, 1);
    writer.failWith = undefined;
    await advance(clock, 1000);
    assert.deepEqual(
      writer.calls.map((c) => [c.at - T0, c.conditions[0]?.status]),
      [
        [1000, 'True'],
        [31_000, 'False'],
      ],
    );
    manager.stop();
  });

  it('reports synced() by the documented rule: not ready after two failed syncs in a row', async () => {
    const { clock, writer, manager } = setup({ heartbeatPeriodMs: 60_000 });
    assert.equal(manager.synced(), true, 'nothing to write yet');
    manager.update(cond('A', 'True'));
    assert.equal(manager.synced(), false, 'a condition waits for its first sync');
    manager.start();
    await advance(clock, 1000);
    assert.equal(manager.synced(), true);
    assert.equal(manager.lastSyncSuccess, T0 + 1000);
    writer.failWith = new ApiError('500 InternalError', 500);
    manager.update(cond('A', 'False'));
    await advance(clock, 1000);
    assert.ok(writer.calls.length >= 2, 'the sync was tried and failed');
    assert.equal(manager.synced(), true, 'one failed sync is not an outage');
    await advance(clock, 9000);
    assert.equal(manager.synced(), true, 'the resync is not due yet');
    await advance(clock, 1000);
    assert.equal(manager.synced(), false, 'the resync 10 s later failed too: not ready');
    await advance(clock, 60_000);
    assert.equal(manager.synced(), false, 'stays not ready while syncs fail');
    writer.failWith = undefined;
    await advance(clock, 10_000);
    assert.equal(manager.synced(), true, 'ready again from the next success');
    manager.stop();
  });
});
