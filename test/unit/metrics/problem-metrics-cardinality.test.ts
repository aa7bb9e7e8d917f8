// Templated reasons (`reason: Xid${1}`) expand to whatever a log line captures; problem_counter and
// problem_gauge keep at most MAX_TEMPLATED_REASONS series per template and fold the rest into one
// catch-all reason, counted. The engine and the metrics run their production path together.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { Registry } from 'prom-client';
import { createRegistry } from '../../../src/core/metrics.ts';
import { MAX_TEMPLATED_REASONS, ProblemMetrics } from '../../../src/metrics/problem-metrics.ts';
import { catchAllReason } from '../../../src/rules/template.ts';
import { engine, line, T0 } from '../rules/log-engine-helpers.ts';

async function values(registry: Registry, name: string) {
  const metric = (await registry.getMetricsAsJSON()).find((m) => m.name === name);
  assert.ok(metric, `${name} is not registered`);
  return metric.values;
}

const XID = 'NVRM: Xid \\(PCI:0000:3b:00\\): (\\d+), pid=\\d+';
const xidLine = (code: number, at: number) => line(`NVRM: Xid (PCI:0000:3b:00): ${code}, pid=1`, at);

describe('problem metrics with templated reasons', () => {
  it('caps problem_counter series per template, folds the rest into <template>Other, counts overflow', async () => {
    const registry = createRegistry();
    const pm = new ProblemMetrics(registry);
    const e = engine([{ type: 'temporary', reason: 'Xid${1}', pattern: XID }]);
    const reasons = new Set<string>();
    const distinct = MAX_TEMPLATED_REASONS + 200;
    for (let i = 0; i < distinct; i++) {
      const r = e.process(xidLine(i, T0 + 1000 + i));
      assert.ok(r);
      for (const ev of r.status.events) reasons.add(ev.reason);
      pm.apply(r);
    }
    // A repeat of an admitted reason keeps its own series.
    const again = e.process(xidLine(0, T0 + 5000));
    assert.ok(again);
    pm.apply(again);
    const series = await values(registry, 'problem_counter');
    assert.equal(series.length, MAX_TEMPLATED_REASONS + 1, 'the cap plus one catch-all series');
    const by = new Map(series.map((v) => [String(v.labels.reason), v.value]));
    assert.equal(by.get('Xid0'), 2);
    assert.equal(by.get(`Xid${MAX_TEMPLATED_REASONS - 1}`), 1);
    assert.equal(by.get(`Xid${MAX_TEMPLATED_REASONS}`), undefined);
    assert.equal(by.get('XidOther'), 200);
    const overflow = await values(registry, 'npd_problem_reasons_overflow_total');
    assert.deepEqual(
      overflow.map((v) => [v.labels.template, v.value]),
      [['Xid${1}', 200]],
    );
    // The Event keeps the real reason: the correlator already bounds what events cost.
    assert.equal(reasons.size, distinct, 'event reasons are not capped');
  });

  it('caps problem_gauge the same way and clears the catch-all series', async () => {
    const registry = createRegistry();
    const pm = new ProblemMetrics(registry);
    const e = engine([
      { type: 'permanent', condition: 'KernelDeadlock', reason: 'Xid${1}', pattern: XID },
      { type: 'permanent', condition: 'KernelDeadlock', reason: 'Fine', pattern: 'all good' },
    ]);
    pm.initialise([{ type: 'permanent', condition: 'KernelDeadlock', reason: 'Fine' }]);
    for (let i = 0; i < MAX_TEMPLATED_REASONS + 50; i++) {
      const r = e.process(xidLine(i, T0 + 1000 + i));
      if (r) pm.apply(r);
    }
    const gauges = await values(registry, 'problem_gauge');
    assert.ok(gauges.length <= MAX_TEMPLATED_REASONS + 2, `${gauges.length} gauge series`);
    const active = gauges.filter((v) => v.value === 1).map((v) => v.labels.reason);
    assert.deepEqual(active, ['XidOther']);
    const r = e.process(line('all good', T0 + 9000));
    assert.ok(r);
    pm.apply(r);
    const after = await values(registry, 'problem_gauge');
    assert.deepEqual(
      after.filter((v) => v.value === 1).map((v) => v.labels.reason),
      ['Fine'],
    );
  });

  it('names the catch-all after the template, every reference replaced by Other', () => {
    assert.equal(catchAllReason('Xid${1}'), 'XidOther');
    assert.equal(catchAllReason('${kind}Error$2'), 'OtherErrorOther');
    assert.equal(catchAllReason('Cost$$${1}'), 'Cost$Other');
  });
});
