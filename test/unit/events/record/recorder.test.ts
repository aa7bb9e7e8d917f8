import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { Registry } from 'prom-client';
import { FakeClock } from '../../../../src/core/clock.ts';
import { silentLogger } from '../../../../src/core/logger.ts';
import { Broadcaster } from '../../../../src/events/record/broadcaster.ts';
import {
  generateEventName,
  isDns1123Subdomain,
  monotonicNanos,
} from '../../../../src/events/record/names.ts';
import { EventRecorder, type EventRecorderOptions, nodeRef } from '../../../../src/events/record/recorder.ts';
import type { KubeEvent } from '../../../../src/events/record/types.ts';
import { drain, metricValue } from './helpers.ts';

const T0 = Date.UTC(2026, 0, 1, 12, 0, 0);

function setup(overrides: Partial<EventRecorderOptions> = {}) {
  const clock = new FakeClock(T0);
  const registry = new Registry();
  const logger = silentLogger();
  const broadcaster = new Broadcaster<KubeEvent>({ registry, logger, source: 'kernel-monitor' });
  const seen: KubeEvent[] = [];
  broadcaster.watch('test', (e) => {
    seen.push(e);
  });
  const recorder = new EventRecorder({
    component: 'kernel-monitor',
    host: 'node-1',
    involvedObject: nodeRef('node-1', 'uid-1'),
    clock,
    broadcaster,
    nanos: monotonicNanos(clock),
    logger,
    registry,
    ...overrides,
  });
  return { clock, registry, broadcaster, recorder, seen };
}

describe('EventRecorder', () => {
  it('builds the core/v1 event client-go makeEvent would', async () => {
    const { recorder, seen } = setup();
    assert.equal(recorder.event('Warning', 'OOMKilling', 'Killed process 1'), true);
    await drain();
    assert.deepEqual(seen, [
      {
        name: `node-1.${(BigInt(T0) * 1_000_000n).toString(16)}`,
        namespace: 'default',
        involvedObject: { apiVersion: 'v1', kind: 'Node', name: 'node-1', namespace: '', uid: 'uid-1' },
        reason: 'OOMKilling',
        message: 'Killed process 1',
        type: 'Warning',
        source: { component: 'kernel-monitor', host: 'node-1' },
        reportingComponent: 'kernel-monitor',
        reportingInstance: 'node-1',
        firstTimestamp: T0,
        lastTimestamp: T0,
        count: 1,
      },
    ]);
  });

  it('gives strictly increasing names to events in the same millisecond', async () => {
    const { recorder, seen } = setup();
    for (let i = 0; i < 3; i++) recorder.event('Normal', 'R', 'same');
    await drain();
    const suffixes = seen.map((e) => BigInt(`0x${e.name.split('.')[1]}`));
    assert.deepEqual(
      suffixes,
      [0n, 1n, 2n].map((d) => BigInt(T0) * 1_000_000n + d),
    );
    assert.ok(seen.every((e) => e.firstTimestamp === T0));
  });

  it('keeps % verbatim (no format strings)', async () => {
    const { recorder, seen } = setup();
    recorder.event('Warning', 'DiskFull', '100% used %s %d %%v');
    await drain();
    assert.equal(seen[0]?.message, '100% used %s %d %%v');
  });

  it('drops and counts an invalid type', async () => {
    const { recorder, seen, registry } = setup();
    assert.equal(recorder.event('Error', 'R', 'm'), false);
    await drain();
    assert.deepEqual(seen, []);
    assert.equal(await metricValue(registry, 'npd_events_dropped_total', { point: 'invalid_type' }), 1);
    assert.equal(await metricValue(registry, 'npd_events_recorded_total'), 0);
  });

  it('counts recorded events by source and type', async () => {
    const { recorder, registry } = setup();
    recorder.event('Warning', 'R', 'a');
    recorder.event('Warning', 'R', 'b');
    recorder.event('Normal', 'R', 'c');
    const recorded = (type: string) =>
      metricValue(registry, 'npd_events_recorded_total', { source: 'kernel-monitor', type });
    assert.equal(await recorded('Warning'), 2);
    assert.equal(await recorded('Normal'), 1);
  });

  it('never blocks: a full queue or a stopped broadcaster returns false, counted', async () => {
    const { recorder, registry, broadcaster } = setup();
    const results = Array.from({ length: 1001 }, () => recorder.event('Warning', 'R', 'm'));
    assert.equal(results.filter((r) => !r).length, 1);
    await broadcaster.shutdown();
    assert.equal(recorder.event('Warning', 'R', 'm'), false);
    assert.equal(await metricValue(registry, 'npd_events_dropped_total', { point: 'incoming' }), 1);
    assert.equal(await metricValue(registry, 'npd_events_dropped_total', { point: 'stopped' }), 1);
    assert.equal(await metricValue(registry, 'npd_events_recorded_total'), 1000);
  });

  it('falls back to a UUID when <name>.<hex> is not a DNS-1123 subdomain', async () => {
    const { recorder, seen } = setup({
      involvedObject: nodeRef('Node_1', 'u'),
      uuid: () => '0b8e4a3c-1d2f-4e5a-9b6c-7d8e9f0a1b2c',
    });
    recorder.event('Normal', 'R', 'm');
    await drain();
    assert.equal(seen[0]?.name, '0b8e4a3c-1d2f-4e5a-9b6c-7d8e9f0a1b2c');
  });

  it('uses the configured namespace for a Node, and the object namespace when it has one', async () => {
    const custom = setup({ namespace: 'npd' });
    custom.recorder.event('Normal', 'R', 'm');
    const namespaced = setup({
      involvedObject: { ...nodeRef('pod-1', 'u'), kind: 'Pod', namespace: 'apps' },
    });
    namespaced.recorder.event('Normal', 'R', 'm');
    await drain();
    assert.equal(custom.seen[0]?.namespace, 'npd');
    assert.equal(custom.seen[0]?.involvedObject.namespace, '');
    assert.equal(namespaced.seen[0]?.namespace, 'apps');
  });
});

describe('event names', () => {
  it('formats <name>.<lowercase hex> like GenerateEventName', () => {
    assert.equal(generateEventName('node-1', 1700000000123456789n), 'node-1.17979cfe3d85cd15');
  });

  it('validates DNS-1123 subdomains', () => {
    assert.equal(isDns1123Subdomain('node-1.abc'), true);
    assert.equal(isDns1123Subdomain('Node-1.abc'), false);
    assert.equal(isDns1123Subdomain('-node'), false);
    assert.equal(isDns1123Subdomain('a'.repeat(254)), false);
  });

  it('monotonicNanos follows the clock and never repeats', () => {
    const clock = new FakeClock(T0);
    const nanos = monotonicNanos(clock);
    const a = nanos();
    const b = nanos();
    clock.advance(5);
    const c = nanos();
    assert.equal(a, BigInt(T0) * 1_000_000n);
    assert.equal(b, a + 1n);
    assert.equal(c, a + 5_000_000n);
  });
});
