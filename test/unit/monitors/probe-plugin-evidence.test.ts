/**
 * Issue 38 build item 3: a problem a built-in probe or a custom plugin raises carries its evidence
 * (core/evidence.ts), `probe/probe` or `custom/plugin`, on the True condition and its event; a healthy
 * or undecided result raises nothing and so carries none. Fake clock, fake checks and executor.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { FakeClock } from '../../../src/core/clock.ts';
import { silentLogger } from '../../../src/core/logger.ts';
import { createRegistry } from '../../../src/core/metrics.ts';
import type { Status } from '../../../src/core/types.ts';
import { ProblemMetrics } from '../../../src/metrics/problem-metrics.ts';
import { type BuiltProbe, ProbeMonitor } from '../../../src/monitors/probe/monitor.ts';
import type { ProbeStatus } from '../../../src/rules/probe-engine.ts';
import { advance, monitorHarness, outcome, pluginConfig } from './custom-plugin/helpers.ts';
import { config, T0 } from './probe/helpers.ts';

const settle = () => new Promise((r) => setImmediate(r));

describe('probe evidence', () => {
  it('a NonOK result raises the condition with probe/probe; OK clears it and the evidence goes', async () => {
    const clock = new FakeClock(T0);
    const registry = createRegistry();
    const c = config({
      source: 'probes',
      interval: '30s',
      splay: '0s',
      probes: [{ kind: 'fd', name: 'fd', condition: 'FDPressure', reason: 'TooManyFDs' }],
      conditions: [{ type: 'FDPressure', reason: 'FDsOK', message: 'fine' }],
    });
    const spec = c.probes[0] as BuiltProbe['spec'];
    const rule = { type: spec.type, condition: spec.condition, reason: spec.reason };
    let next: ProbeStatus = 'NonOK';
    const probe: BuiltProbe = {
      spec,
      check: { rules: [rule], check: async () => [{ rule, status: next, message: '95% of fs.file-max' }] },
    };
    const deps = { clock, registry, logger: silentLogger(), problemMetrics: new ProblemMetrics(registry) };
    const monitor = new ProbeMonitor(c, [probe], { ...deps, random: () => 0 });
    const statuses: Status[] = [];
    await monitor.start((s) => statuses.push(s));
    clock.advance(0);
    await settle();
    const raised = statuses.at(-1);
    assert.equal(raised?.conditions[0]?.status, 'True');
    const evidence = { source: 'probes', plugin: 'probe', trust: 'probe' };
    assert.deepEqual(raised?.conditions[0]?.evidence, evidence);
    assert.deepEqual(raised?.events[0]?.evidence, evidence);
    next = 'OK';
    clock.advance(30_000);
    await settle();
    assert.equal(statuses.at(-1)?.conditions[0]?.status, 'False');
    assert.equal(statuses.at(-1)?.conditions[0]?.evidence, undefined, 'control: no problem, no evidence');
    await monitor.stop();
  });
});

describe('custom plugin evidence', () => {
  const NTP = { type: 'NTPProblem', reason: 'NTPIsUp', message: 'ntp service is up' };
  const rules = [
    { type: 'permanent', condition: 'NTPProblem', reason: 'NTPIsDown', path: '/check' },
    { type: 'temporary', reason: 'NTPHiccup', path: '/temp' },
  ];
  const cfg = pluginConfig({ pluginConfig: { invoke_interval: '10s' }, conditions: [NTP], rules });
  const evidence = { source: 'test-plugins', plugin: 'custom', trust: 'plugin' };

  it("the script's NonOK raises the condition and the temporary event with custom/plugin", async () => {
    const h = monitorHarness(cfg, (e) => {
      e.script('/check', [outcome('NonOK', 'ntp.service is not running')]);
      e.script('/temp', [outcome('NonOK', 'one bad sample')]);
    });
    await h.monitor.start((s) => h.statuses.push(s));
    await advance(h.clock, 1000);
    const condition = h.statuses.at(-1)?.conditions.find((x) => x.type === 'NTPProblem');
    assert.equal(condition?.status, 'True');
    assert.deepEqual(condition?.evidence, evidence);
    const events = h.statuses.flatMap((s) => s.events);
    // Each rule runs on its own schedule: which event comes first is not the point.
    assert.deepEqual(
      new Map(events.map((e) => [e.reason, e.evidence])),
      new Map([
        ['NTPIsDown', evidence],
        ['NTPHiccup', evidence],
      ]),
    );
    await h.monitor.stop();
  });

  it('control: an Unknown result (a missing binary) raises no problem and carries no evidence', async () => {
    const h = monitorHarness(cfg, (e) => {
      e.script('/check', [outcome('Unknown', 'no systemctl')]);
      e.script('/temp', [outcome('OK', 'fine')]);
    });
    await h.monitor.start((s) => h.statuses.push(s));
    await advance(h.clock, 1000);
    const condition = h.statuses.at(-1)?.conditions.find((x) => x.type === 'NTPProblem');
    assert.equal(condition?.status, 'Unknown');
    assert.equal(condition?.evidence, undefined);
    assert.ok(h.statuses.flatMap((s) => s.events).every((e) => e.evidence === undefined));
    await h.monitor.stop();
  });
});
