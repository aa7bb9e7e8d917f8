// npd_condition_problem (issue 39 item 3): one series per condition type, 1 while the condition means a
// problem whatever its polarity. Time is a fake clock; the subsystem condition comes from the real
// SubsystemHealth over rules/gpu.yaml, so its flip back waits for the window and the hold.
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import type { Registry } from 'prom-client';
import { SubsystemHealth } from '../../../src/conditions/subsystem.ts';
import { SubsystemReporter } from '../../../src/conditions/subsystem-reporter.ts';
import { SubsystemTable } from '../../../src/conditions/subsystem-table.ts';
import { loadConfigs } from '../../../src/config/load.ts';
import { FakeClock } from '../../../src/core/clock.ts';
import { createRegistry } from '../../../src/core/metrics.ts';
import type { Condition, ConditionStatus, Status } from '../../../src/core/types.ts';
import { CONDITION_PROBLEM_METRIC, ConditionProblemGauge } from '../../../src/metrics/condition-problem.ts';
import { systemLogConfigKind } from '../../../src/monitors/system-log/schema.ts';

const ROOT = join(import.meta.dirname, '../../..');
const WINDOW = 10 * 60_000;
const HOLD = 2 * 60_000;

/** The metric's series as `type status problem_when reason => value`. */
async function series(registry: Registry): Promise<Record<string, number>> {
  const metric = (await registry.getMetricsAsJSON()).find((m) => m.name === CONDITION_PROBLEM_METRIC);
  assert.ok(metric, `${CONDITION_PROBLEM_METRIC} is registered`);
  const out: Record<string, number> = {};
  for (const { labels: l, value } of metric.values)
    out[`${l.type} ${l.status} ${l.problem_when} ${l.reason}`] = value;
  return out;
}

function condition(type: string, status: ConditionStatus, reason: string, transition: number): Condition {
  return { type, status, reason, message: reason, transition };
}

function gpuSubsystem(clock: FakeClock, gauge: ConditionProblemGauge): SubsystemReporter {
  const table = SubsystemTable.from(
    loadConfigs([{ file: join(ROOT, 'rules/gpu.yaml') }], [systemLogConfigKind]),
  );
  const health = new SubsystemHealth({ table, windowMs: WINDOW, holdMs: HOLD, nodeName: 'n1' });
  const publish = (list: readonly Condition[]) => {
    for (const c of list) gauge.observe(c);
  };
  const reporter = new SubsystemReporter({ health, clock, publish });
  reporter.start();
  return reporter;
}

function xid79(timestamp: number): Status {
  // The driver's line as rules/gpu.yaml quotes it; the table classifies the event by its reason.
  const message =
    "NVRM: Xid (PCI:0000:3b:00): 79, pid='<unknown>', name=<unknown>, GPU has fallen off the bus.";
  return {
    source: 'gpu-monitor',
    conditions: [],
    events: [{ severity: 'warn', reason: 'NVRMXid79', message, timestamp }],
  };
}

describe('npd_condition_problem', () => {
  it('a problem-when-True type: 1 while True, 0 when False, one series through reason changes', async () => {
    const clock = new FakeClock();
    const registry = createRegistry();
    const gauge = new ConditionProblemGauge(registry);
    gauge.observe(condition('KernelDeadlock', 'False', 'KernelHasNoDeadlock', clock.now()));
    assert.deepEqual(await series(registry), { 'KernelDeadlock False True KernelHasNoDeadlock': 0 });
    clock.advance(60_000);
    gauge.observe(condition('KernelDeadlock', 'True', 'DockerHung', clock.now()));
    assert.deepEqual(await series(registry), { 'KernelDeadlock True True DockerHung': 1 });
    clock.advance(60_000);
    gauge.observe(condition('KernelDeadlock', 'True', 'AUFSUmountHung', clock.now() - 60_000));
    assert.deepEqual(await series(registry), { 'KernelDeadlock True True AUFSUmountHung': 1 });
    gauge.observe(condition('KernelDeadlock', 'False', 'KernelHasNoDeadlock', clock.now()));
    assert.deepEqual(await series(registry), { 'KernelDeadlock False True KernelHasNoDeadlock': 0 });
  });

  it('a problem-when-False type: AcceleratedHardwareReady False is 1, True again after window and hold is 0', async () => {
    const clock = new FakeClock();
    const registry = createRegistry();
    const gauge = new ConditionProblemGauge(registry);
    const reporter = gpuSubsystem(clock, gauge);
    clock.advance(1_000);
    assert.deepEqual(await series(registry), {
      'AcceleratedHardwareReady True False AcceleratedHardwareIsHealthy': 0,
    });
    reporter.observe(xid79(clock.now()), {});
    clock.advance(1_000);
    assert.deepEqual(await series(registry), { 'AcceleratedHardwareReady False False NVRMXid79': 1 });
    // Still a problem until the event leaves the window and the hold has passed without another.
    clock.advance(WINDOW + HOLD - 5_000);
    assert.deepEqual(await series(registry), { 'AcceleratedHardwareReady False False NVRMXid79': 1 });
    clock.advance(5_000);
    assert.deepEqual(await series(registry), {
      'AcceleratedHardwareReady True False AcceleratedHardwareIsHealthy': 0,
    });
    reporter.stop();
  });

  it('Unknown is 0 under status="Unknown" for either polarity, not hidden and not a problem', async () => {
    const registry = createRegistry();
    const gauge = new ConditionProblemGauge(registry);
    gauge.observe(condition('NTPProblem', 'Unknown', 'ProbeTimedOut', 0));
    gauge.observe(condition('KernelReady', 'Unknown', 'NoData', 0));
    gauge.observe(condition('StorageReady', 'False', 'XfsHasShutdown', 0));
    assert.deepEqual(await series(registry), {
      'NTPProblem Unknown True ProbeTimedOut': 0,
      'KernelReady Unknown False NoData': 0,
      'StorageReady False False XfsHasShutdown': 1,
    });
  });

  it('retain drops the types a reload removed and keeps the rest', async () => {
    const registry = createRegistry();
    const gauge = new ConditionProblemGauge(registry);
    gauge.observe(condition('KernelDeadlock', 'True', 'DockerHung', 0));
    gauge.observe(condition('GPUUnhealthy', 'True', 'GPUFallenOffBus', 0));
    gauge.retain(['KernelDeadlock', 'KernelReady']);
    assert.deepEqual(await series(registry), { 'KernelDeadlock True True DockerHung': 1 });
  });

  it('exposes the name, type and labels that the shipped alerts and dashboard query', async () => {
    const registry = createRegistry();
    new ConditionProblemGauge(registry).observe(condition('KernelReady', 'False', 'KernelOopsed', 0));
    const text = await registry.getSingleMetricAsString(CONDITION_PROBLEM_METRIC);
    assert.match(text, /^# TYPE npd_condition_problem gauge$/m);
    assert.match(
      text,
      /^npd_condition_problem\{type="KernelReady",status="False",problem_when="False",reason="KernelOopsed"\} 1$/m,
    );
  });
});
