/**
 * Issue 40 section 2: one event per Xid occurrence, whichever source (the kernel log, NVML's event
 * wait) reports it first (events/xid-once.ts). Fake clock throughout; times are the events' own.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { Registry } from 'prom-client';
import { FakeClock } from '../../../src/core/clock.ts';
import { createRegistry } from '../../../src/core/metrics.ts';
import type { ProblemEvent } from '../../../src/core/types.ts';
import { XID_WINDOW_MS, XidOnce, xidCodeLabel, xidOnceOutlet } from '../../../src/events/xid-once.ts';

const T0 = Date.UTC(2026, 0, 1);
const KMSG = 'gpu-monitor';
const NVML = 'nvml-gpu-monitor';
const UUID = 'GPU-9571ff8c-5bff-8cfd-14bc-40686eeaa1f3';

function xid(code: number, at: number, busId = '0000:00:06'): ProblemEvent {
  return {
    severity: 'warn',
    timestamp: at,
    reason: `NVRMXid${code}`,
    message: `NVRM: Xid (PCI:${busId}): ${code}, pid=544, name=python3, channel 0x0000000a`,
    occurrence: { kind: 'xid', code, busId, uuid: UUID },
  };
}

function setup(windowMs?: number) {
  const clock = new FakeClock(T0);
  const registry = createRegistry();
  const stage = new XidOnce(windowMs === undefined ? { clock, registry } : { clock, registry, windowMs });
  /** Passes one source's batch at the event's time (the clock moves with it). */
  const pass = (source: string, ...events: ProblemEvent[]) => {
    const last = events[events.length - 1];
    if (last && last.timestamp > clock.now()) clock.jumpTo(last.timestamp);
    return stage.filter(source, events);
  };
  return { clock, registry, stage, pass };
}

async function value(registry: Registry, name: string, labels: Record<string, string>): Promise<number> {
  const metric = await registry.getSingleMetric(name)?.get();
  const sample = metric?.values.find((v) => Object.entries(labels).every(([k, l]) => v.labels[k] === l));
  return sample?.value ?? 0;
}

describe('XidOnce: one event per Xid occurrence', () => {
  it('drops NVML’s report of an Xid the kernel log reported 6 ms earlier (gpu.md §0), and counts it', async () => {
    const { registry, pass } = setup();
    assert.equal(pass(KMSG, xid(31, T0)).length, 1);
    assert.deepEqual(pass(NVML, xid(31, T0 + 6)), []);
    assert.equal(await value(registry, 'npd_gpu_xid_duplicates_total', { source: NVML }), 1);
    assert.equal(await value(registry, 'npd_gpu_xid_total', { code: '31' }), 1);
  });

  it('drops the kernel log’s report when NVML was first (the other order)', async () => {
    const { registry, pass } = setup();
    assert.equal(pass(NVML, xid(79, T0)).length, 1);
    assert.deepEqual(pass(KMSG, xid(79, T0 + 6)), []);
    assert.equal(await value(registry, 'npd_gpu_xid_duplicates_total', { source: KMSG }), 1);
    assert.equal(await value(registry, 'npd_gpu_xid_duplicates_total', { source: NVML }), 0);
    assert.equal(await value(registry, 'npd_gpu_xid_total', { code: '79' }), 1);
  });

  it('passes every repeat from one source: each is an occurrence of its own', async () => {
    const { registry, pass } = setup();
    assert.equal(pass(KMSG, xid(13, T0), xid(13, T0 + 1)).length, 2);
    assert.equal(pass(KMSG, xid(13, T0 + 2)).length, 1);
    assert.equal(await value(registry, 'npd_gpu_xid_total', { code: '13' }), 3);
    assert.equal(await value(registry, 'npd_gpu_xid_duplicates_total', { source: KMSG }), 0);
  });

  it('matches each report once: two kernel-log Xids and two NVML events give two events', () => {
    const { pass } = setup();
    assert.equal(pass(KMSG, xid(13, T0), xid(13, T0 + 1)).length, 2);
    assert.deepEqual(pass(NVML, xid(13, T0 + 5)), []);
    assert.deepEqual(pass(NVML, xid(13, T0 + 6)), []);
    // A third NVML event has no unmatched twin left: it is an occurrence the kernel log did not show.
    assert.equal(pass(NVML, xid(13, T0 + 7)).length, 1);
  });

  it('passes both when they are further apart than the window; within it, one', () => {
    const late = setup();
    assert.equal(late.pass(KMSG, xid(43, T0)).length, 1);
    assert.equal(late.pass(NVML, xid(43, T0 + XID_WINDOW_MS + 1)).length, 1);
    const inside = setup();
    assert.equal(inside.pass(KMSG, xid(43, T0)).length, 1);
    assert.deepEqual(inside.pass(NVML, xid(43, T0 + XID_WINDOW_MS)), []);
  });

  it('forgets what passed a window ago on the agent’s clock, even if a report carries an old time', () => {
    const { clock, stage, pass } = setup();
    assert.equal(pass(KMSG, xid(43, T0)).length, 1);
    clock.jumpTo(T0 + XID_WINDOW_MS + 1);
    // Stamped as if at T0 (a source's clock), but the twin is gone from memory: it passes.
    assert.equal(stage.filter(NVML, [xid(43, T0 + 1)]).length, 1);
  });

  it('keeps two GPUs apart, and two codes of one GPU', () => {
    const { pass } = setup();
    assert.equal(pass(KMSG, xid(79, T0, '0000:3b:00')).length, 1);
    assert.equal(pass(NVML, xid(79, T0 + 1, '0000:86:00')).length, 1);
    assert.equal(pass(NVML, xid(48, T0 + 2, '0000:3b:00')).length, 1);
    // Control: the same GPU and code from the other source is dropped.
    assert.deepEqual(pass(NVML, xid(79, T0 + 3, '0000:3b:00')), []);
  });

  it('passes events without an occurrence untouched, in order, and NVML’s alone when /dev/kmsg is unreadable', async () => {
    const { registry, pass } = setup();
    const other: ProblemEvent = { severity: 'warn', timestamp: T0, reason: 'OOMKilling', message: 'oom' };
    assert.deepEqual(pass(KMSG, other), [other]);
    // No kernel-log reader: only NVML reports, and every one of its Xids passes and is counted.
    const batch = [xid(31, T0 + 1), other, xid(43, T0 + 2), xid(31, T0 + 3)];
    assert.deepEqual(pass(NVML, ...batch), batch);
    assert.equal(await value(registry, 'npd_gpu_xid_total', { code: '31' }), 2);
    assert.equal(await value(registry, 'npd_gpu_xid_total', { code: '43' }), 1);
  });

  it('labels codes by NVIDIA’s catalog: 1-172 by number, 999 unknown, the rest other', async () => {
    assert.deepEqual([1, 79, 172, 173, 0, 999, 1000, 2.5].map(xidCodeLabel), [
      '1',
      '79',
      '172',
      'other',
      'other',
      'unknown',
      'other',
      'other',
    ]);
    const { registry, pass } = setup();
    pass(NVML, xid(999, T0), xid(4000, T0 + 1));
    assert.equal(await value(registry, 'npd_gpu_xid_total', { code: 'unknown' }), 1);
    assert.equal(await value(registry, 'npd_gpu_xid_total', { code: 'other' }), 1);
  });

  it('creates its series with the first Xid: a node without GPUs exports none', () => {
    const { registry, pass } = setup();
    pass(KMSG, { severity: 'warn', timestamp: T0, reason: 'OOMKilling', message: 'oom' });
    assert.equal(registry.getSingleMetric('npd_gpu_xid_total'), undefined);
    assert.equal(registry.getSingleMetric('npd_gpu_xid_duplicates_total'), undefined);
    pass(KMSG, xid(31, T0 + 1));
    assert.ok(registry.getSingleMetric('npd_gpu_xid_total'));
    assert.ok(registry.getSingleMetric('npd_gpu_xid_duplicates_total'));
  });

  it('as an outlet: hands every outlet the batch without the dropped events', () => {
    const { clock, registry } = setup();
    const stage = new XidOnce({ clock, registry });
    const seen: [string, number][] = [];
    const outlet = xidOnceOutlet(stage, [
      (s, e) => seen.push([s, e.length]),
      (s, e) => seen.push([s, e.length]),
    ]);
    outlet(KMSG, [xid(31, T0)]);
    outlet(NVML, [xid(31, T0 + 6)]);
    assert.deepEqual(seen, [
      [KMSG, 1],
      [KMSG, 1],
      [NVML, 0],
      [NVML, 0],
    ]);
  });
});
