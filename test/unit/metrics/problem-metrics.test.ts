import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { Registry } from 'prom-client';
import { createRegistry } from '../../../src/core/metrics.ts';
import { ProblemMetrics } from '../../../src/metrics/problem-metrics.ts';
import { ProbeRuleEngine } from '../../../src/rules/probe-engine.ts';

/** Every series of a metric as `labels => value`, labels in `k=v,k=v` form. */
async function series(registry: Registry, name: string): Promise<Record<string, number>> {
  const metric = (await registry.getMetricsAsJSON()).find((m) => m.name === name);
  assert.ok(metric, `${name} is not registered`);
  const out: Record<string, number> = {};
  for (const v of metric.values) {
    const labels = Object.entries(v.labels)
      .map(([k, val]) => `${k}=${String(val)}`)
      .join(',');
    out[labels] = v.value;
  }
  return out;
}

function setup(): { registry: Registry; pm: ProblemMetrics } {
  const registry = createRegistry();
  return { registry, pm: new ProblemMetrics(registry) };
}

describe('ProblemMetrics (npd.md §4.6)', () => {
  it("exposes NPD's exact names, types, help and labels", async () => {
    const { registry, pm } = setup();
    pm.initialise([{ type: 'permanent', condition: 'KernelDeadlock', reason: 'DockerHung' }]);
    const counter = await registry.getSingleMetricAsString('problem_counter');
    assert.match(
      counter,
      /^# HELP problem_counter Number of times a specific type of problem have occurred\.$/m,
    );
    assert.match(counter, /^# TYPE problem_counter counter$/m);
    assert.match(counter, /^problem_counter\{reason="DockerHung"\} 0$/m);
    const gauge = await registry.getSingleMetricAsString('problem_gauge');
    assert.match(
      gauge,
      /^# HELP problem_gauge Whether a specific type of problem is affecting the node or not\.$/m,
    );
    assert.match(gauge, /^# TYPE problem_gauge gauge$/m);
    assert.match(gauge, /^problem_gauge\{type="KernelDeadlock",reason="DockerHung"\} 0$/m);
  });

  it('pre-initialises a zero counter per rule and a zero gauge per permanent rule only', async () => {
    const { registry, pm } = setup();
    pm.initialise([
      { type: 'temporary', reason: 'OOMKilling' },
      { type: 'temporary', reason: 'KernelOops' },
      { type: 'temporary', reason: 'KernelOops' },
      { type: 'permanent', condition: 'KernelDeadlock', reason: 'DockerHung' },
      { type: 'permanent', condition: 'ReadonlyFilesystem', reason: 'FilesystemIsReadOnly' },
    ]);
    assert.deepEqual(await series(registry, 'problem_counter'), {
      'reason=OOMKilling': 0,
      'reason=KernelOops': 0,
      'reason=DockerHung': 0,
      'reason=FilesystemIsReadOnly': 0,
    });
    assert.deepEqual(await series(registry, 'problem_gauge'), {
      'type=KernelDeadlock,reason=DockerHung': 0,
      'type=ReadonlyFilesystem,reason=FilesystemIsReadOnly': 0,
    });
  });

  it('increments the counter once per counted reason', async () => {
    const { registry, pm } = setup();
    pm.initialise([{ type: 'temporary', reason: 'OOMKilling' }]);
    pm.apply({ counted: ['OOMKilling', 'OOMKilling', 'TaskHung'], gauges: [] });
    pm.apply({ counted: ['OOMKilling'], gauges: [] });
    assert.deepEqual(await series(registry, 'problem_counter'), {
      'reason=OOMKilling': 3,
      'reason=TaskHung': 1,
    });
  });

  it('keeps at most one reason at 1 per type: a new reason zeroes the previous one', async () => {
    const { registry, pm } = setup();
    pm.apply({ counted: [], gauges: [{ type: 'KernelDeadlock', reason: 'DockerHung', active: true }] });
    pm.apply({
      counted: [],
      gauges: [{ type: 'ReadonlyFilesystem', reason: 'FilesystemIsReadOnly', active: true }],
    });
    assert.deepEqual(await series(registry, 'problem_gauge'), {
      'type=KernelDeadlock,reason=DockerHung': 1,
      'type=ReadonlyFilesystem,reason=FilesystemIsReadOnly': 1,
    });
    pm.apply({ counted: [], gauges: [{ type: 'KernelDeadlock', reason: 'OtherHung', active: true }] });
    assert.deepEqual(await series(registry, 'problem_gauge'), {
      'type=KernelDeadlock,reason=DockerHung': 0,
      'type=ReadonlyFilesystem,reason=FilesystemIsReadOnly': 1,
      'type=KernelDeadlock,reason=OtherHung': 1,
    });
    pm.apply({ counted: [], gauges: [{ type: 'KernelDeadlock', reason: 'OtherHung', active: false }] });
    assert.equal((await series(registry, 'problem_gauge'))['type=KernelDeadlock,reason=OtherHung'], 0);
    pm.apply({ counted: [], gauges: [{ type: 'KernelDeadlock', reason: 'DockerHung', active: true }] });
    const after = await series(registry, 'problem_gauge');
    assert.equal(after['type=KernelDeadlock,reason=DockerHung'], 1);
    assert.equal(after['type=KernelDeadlock,reason=OtherHung'], 0);
  });

  it('lets several monitors share one registry', async () => {
    const registry = createRegistry();
    const a = new ProblemMetrics(registry);
    const b = new ProblemMetrics(registry);
    a.apply({ counted: ['X'], gauges: [] });
    b.apply({ counted: ['X'], gauges: [] });
    assert.deepEqual(await series(registry, 'problem_counter'), { 'reason=X': 2 });
  });

  // NPD's SetProblemGauge zeroes the type's last reason whenever any reason is set, active or not. The
  // custom-plugin engine reports a cleared condition under its default reason, so that is what clears it.
  it('zeroes the previous reason when the type is set inactive under another reason', {}, async () => {
    const { registry, pm } = setup();
    pm.apply({ counted: [], gauges: [{ type: 'NTPProblem', reason: 'NTPIsDown', active: true }] });
    pm.apply({ counted: [], gauges: [{ type: 'NTPProblem', reason: 'NTPIsUp', active: false }] });
    assert.equal((await series(registry, 'problem_gauge'))['type=NTPProblem,reason=NTPIsDown'], 0);
  });

  it("returns a custom-plugin condition's gauge to 0 when the plugin recovers (engine + metrics)", {}, async () => {
    const { registry, pm } = setup();
    const rule = { type: 'permanent' as const, condition: 'NTPProblem', reason: 'NTPIsDown' };
    pm.initialise([rule]);
    const engine = new ProbeRuleEngine(
      { source: 'ntp', conditions: [{ type: 'NTPProblem', reason: 'NTPIsUp', message: 'up' }] },
      0,
    );
    pm.apply(engine.apply([{ rule, status: 'NonOK', message: 'down' }], 1));
    assert.equal((await series(registry, 'problem_gauge'))['type=NTPProblem,reason=NTPIsDown'], 1);
    pm.apply(engine.apply([{ rule, status: 'OK', message: '' }], 2));
    assert.equal((await series(registry, 'problem_gauge'))['type=NTPProblem,reason=NTPIsDown'], 0);
  });
});
