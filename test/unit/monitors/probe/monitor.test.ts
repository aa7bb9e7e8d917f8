import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { Registry } from 'prom-client';
import { FakeClock } from '../../../../src/core/clock.ts';
import { silentLogger } from '../../../../src/core/logger.ts';
import { createRegistry } from '../../../../src/core/metrics.ts';
import type { Status } from '../../../../src/core/types.ts';
import { ProblemMetrics } from '../../../../src/metrics/problem-metrics.ts';
import { type BuiltProbe, ProbeMonitor } from '../../../../src/monitors/probe/monitor.ts';
import type { ProbeResult, ProbeStatus } from '../../../../src/rules/probe-engine.ts';
import { config, T0 } from './helpers.ts';

/** Lets resolved checks and the monitor's continuations run. */
const settle = () => new Promise((r) => setImmediate(r));

interface Fake {
  probe: BuiltProbe;
  runs: number[];
  next: ProbeStatus | 'throw' | 'hang';
  message: string;
}

function fake(spec: BuiltProbe['spec'], clock: FakeClock): Fake {
  const rule = { type: spec.type, condition: spec.condition, reason: spec.reason };
  const f: Fake = {
    runs: [],
    next: 'OK',
    message: 'fine',
    probe: {
      spec,
      check: {
        rules: [rule],
        check: async ({ signal }): Promise<ProbeResult[]> => {
          f.runs.push(clock.now() - T0);
          if (f.next === 'throw') throw new Error('boom');
          if (f.next === 'hang')
            return new Promise((_, reject) => signal.addEventListener('abort', () => reject(signal.reason)));
          return [{ rule, status: f.next, message: f.message }];
        },
      },
    },
  };
  return f;
}

/** A sample by its full name (histograms: `<name>_count`) and a subset of its labels. */
async function metric(
  registry: Registry,
  name: string,
  labels: Record<string, string>,
): Promise<number | undefined> {
  const m = registry.getSingleMetric(name.replace(/_count$/, ''));
  const values = m ? (await m.get()).values : [];
  return values.find(
    (v) =>
      ((v as { metricName?: string }).metricName ?? name) === name &&
      Object.entries(labels).every(([k, x]) => v.labels[k] === x),
  )?.value;
}

function setup(raw: Record<string, unknown>, random = () => 0) {
  const clock = new FakeClock(T0);
  const registry = createRegistry();
  const c = config(raw);
  const fakes = c.probes.map((s) => fake(s, clock));
  const monitor = new ProbeMonitor(
    c,
    fakes.map((f) => f.probe),
    {
      clock,
      registry,
      logger: silentLogger(),
      problemMetrics: new ProblemMetrics(registry),
      random,
    },
  );
  const statuses: Status[] = [];
  const condition = (type: string) => statuses.at(-1)?.conditions.find((x) => x.type === type);
  return {
    clock,
    registry,
    fakes,
    monitor,
    statuses,
    condition,
    start: () => monitor.start((s) => statuses.push(s)),
  };
}

const two = {
  source: 'probes',
  interval: '30s',
  splay: '10s',
  probes: [
    { kind: 'fd', name: 'a', condition: 'Shared', reason: 'AProblem' },
    { kind: 'pids', name: 'b', condition: 'Shared', reason: 'BProblem', interval: '1m' },
  ],
  conditions: [{ type: 'Shared', reason: 'AllGood', message: 'all good' }],
};

describe('ProbeMonitor', () => {
  it('publishes defaults at start, splays the first runs, then keeps each probe on its interval', async () => {
    const randoms = [0.5, 0.1];
    const t = setup(two, () => randoms.shift() ?? 0);
    await t.start();
    assert.equal(t.statuses[0]?.conditions[0]?.reason, 'AllGood');
    for (let i = 0; i < 130; i++) {
      t.clock.advance(1000);
      await settle();
    }
    assert.deepEqual(t.fakes[0]?.runs, [5000, 35000, 65000, 95000, 125000]);
    assert.deepEqual(t.fakes[1]?.runs, [1000, 61000, 121000]);
    await t.monitor.stop();
    t.clock.advance(120_000);
    await settle();
    assert.equal(t.fakes[0]?.runs.length, 5, 'no runs after stop');
    assert.equal(t.clock.pendingTimers(), 0);
  });

  it('merges probes sharing a condition: a problem in either wins, and it clears only when both are fine', async () => {
    const t = setup({ ...two, splay: '0s' });
    const [a, b] = t.fakes as [Fake, Fake];
    b.next = 'NonOK';
    b.message = 'b is bad';
    await t.start();
    t.clock.advance(0);
    await settle();
    assert.equal(t.condition('Shared')?.status, 'True');
    assert.equal(t.condition('Shared')?.reason, 'BProblem');
    a.next = 'NonOK';
    a.message = 'a is bad';
    t.clock.advance(30_000);
    await settle();
    assert.equal(t.condition('Shared')?.status, 'True', 'a running fine must not clear b');
    assert.equal(t.condition('Shared')?.reason, 'AProblem');
    a.next = 'OK';
    t.clock.advance(30_000);
    await settle();
    assert.equal(t.condition('Shared')?.reason, 'BProblem');
    b.next = 'OK';
    t.clock.advance(30_000);
    await settle();
    assert.equal(t.condition('Shared')?.status, 'True', 'b runs every minute: its last verdict still stands');
    t.clock.advance(30_000);
    await settle();
    assert.equal(t.condition('Shared')?.status, 'False');
    assert.equal(t.condition('Shared')?.message, 'all good');
    // Counted on each change to BProblem: False→True at 0s, and AProblem→BProblem at 60s.
    assert.equal(await metric(t.registry, 'problem_counter', { reason: 'BProblem' }), 2);
    assert.equal(await metric(t.registry, 'problem_counter', { reason: 'AProblem' }), 1);
    assert.equal(await metric(t.registry, 'problem_gauge', { type: 'Shared', reason: 'BProblem' }), 0);
  });

  it('returns problem_gauge of the cleared reason to 0', async () => {
    const t = setup({ probes: [{ kind: 'fd' }] });
    const [f] = t.fakes as [Fake];
    f.next = 'NonOK';
    await t.start();
    t.clock.advance(0);
    await settle();
    assert.equal(
      await metric(t.registry, 'problem_gauge', {
        type: 'FileHandlesLow',
        reason: 'FileHandlesNearLimit',
      }),
      1,
    );
    f.next = 'OK';
    t.clock.advance(30_000);
    await settle();
    assert.equal(t.condition('FileHandlesLow')?.status, 'False');
    assert.equal(
      await metric(t.registry, 'problem_gauge', {
        type: 'FileHandlesLow',
        reason: 'FileHandlesNearLimit',
      }),
      0,
    );
  });

  it('turns a throwing check into Unknown, counts it, marks the monitor unhealthy and recovers', async () => {
    const t = setup({ probes: [{ kind: 'fd' }] });
    const [f] = t.fakes as [Fake];
    f.next = 'throw';
    await t.start();
    t.clock.advance(0);
    await settle();
    assert.equal(t.condition('FileHandlesLow')?.status, 'Unknown');
    assert.equal(t.condition('FileHandlesLow')?.message, 'probe fd failed: boom');
    assert.deepEqual(t.monitor.health(), { up: true, healthy: false, detail: 'fd: boom' });
    assert.equal(
      await metric(t.registry, 'npd_probe_errors_total', { source: 'probe-monitor', probe: 'fd' }),
      1,
    );
    f.next = 'OK';
    t.clock.advance(30_000);
    await settle();
    assert.equal(t.condition('FileHandlesLow')?.status, 'False');
    assert.deepEqual(t.monitor.health(), { up: true, healthy: true });
    assert.equal(await metric(t.registry, 'npd_probe_duration_seconds_count', { probe: 'fd' }), 2);
  });

  it('times a hung check out, aborts it, and waits for it before the next run', async () => {
    const t = setup({ timeout: '5s', probes: [{ kind: 'fd' }] });
    const [f] = t.fakes as [Fake];
    f.next = 'hang';
    await t.start();
    t.clock.advance(0);
    await settle();
    t.clock.advance(5000);
    await settle();
    await settle();
    assert.equal(t.condition('FileHandlesLow')?.status, 'Unknown');
    assert.match(t.condition('FileHandlesLow')?.message ?? '', /timed out after 5000ms/);
    assert.equal(t.monitor.health().healthy, false);
    f.next = 'NonOK';
    t.clock.advance(25_000);
    await settle();
    assert.equal(t.condition('FileHandlesLow')?.status, 'True');
    assert.deepEqual(f.runs, [0, 30000]);
  });

  it('needs failureThreshold NonOK results in a row before it reports a problem', async () => {
    const t = setup({ probes: [{ kind: 'fd', failureThreshold: 3 }] });
    const [f] = t.fakes as [Fake];
    f.next = 'NonOK';
    await t.start();
    const step = async () => {
      t.clock.advance(30_000);
      await settle();
      return t.condition('FileHandlesLow')?.status;
    };
    t.clock.advance(0);
    await settle();
    assert.equal(t.condition('FileHandlesLow')?.status, 'False');
    assert.equal(await step(), 'False');
    assert.equal(await step(), 'True');
    f.next = 'OK';
    assert.equal(await step(), 'False');
    f.next = 'NonOK';
    assert.equal(await step(), 'False', 'the streak starts again');
  });

  it('emits a Warning event per NonOK run of a temporary probe and no condition', async () => {
    const t = setup({ probes: [{ kind: 'fd', type: 'temporary', reason: 'FdWarning' }] });
    const [f] = t.fakes as [Fake];
    f.next = 'NonOK';
    f.message = 'many fds';
    await t.start();
    t.clock.advance(0);
    await settle();
    assert.deepEqual(
      t.statuses.at(-1)?.events.map((e) => [e.severity, e.reason, e.message]),
      [['warn', 'FdWarning', 'many fds']],
    );
    assert.deepEqual(t.statuses.at(-1)?.conditions, []);
  });
});
