import assert from 'node:assert/strict';
import { Writable } from 'node:stream';
import { describe, it } from 'node:test';
import pino from 'pino';
import { ProblemDetector } from '../../../src/agent/detector.ts';
import type { Condition, ProblemEvent, Status } from '../../../src/core/types.ts';

const cond = (type: string, status: Condition['status'], reason: string): Condition => ({
  type,
  status,
  reason,
  message: `${type} ${reason}`,
  transition: 0,
});

/** The reporting monitor: the detector passes it through to status outlets only. */
const MONITOR = {};

function setup(aggregated: readonly string[] = []) {
  const logged: Record<string, unknown>[] = [];
  const logger = pino(
    { level: 'info' },
    new Writable({
      write(chunk, _enc, done) {
        logged.push(JSON.parse(String(chunk)));
        done();
      },
    }),
  );
  const managed: Condition[] = [];
  const tainted: string[] = [];
  const events: [string, readonly ProblemEvent[]][] = [];
  const statuses: [Status, object][] = [];
  const detector = new ProblemDetector({
    logger,
    aggregated: new Set(aggregated),
    outlets: {
      conditions: [(c) => managed.push(c), (c) => tainted.push(`${c.type}=${c.status}`)],
      events: [(source, e) => events.push([source, e])],
      statuses: [(s, m) => statuses.push([s, m])],
    },
  });
  return { detector, logged, managed, tainted, events, statuses };
}

describe('ProblemDetector', () => {
  it('fans every condition out to every outlet and the events to the event outlet', () => {
    const h = setup();
    const event: ProblemEvent = { severity: 'warn', timestamp: 5, reason: 'OOMKilling', message: 'oom' };
    const status = { source: 'kernel', conditions: [cond('KernelDeadlock', 'False', 'OK')], events: [event] };
    h.detector.onStatus(status, MONITOR);
    assert.deepEqual(
      h.managed.map((c) => c.type),
      ['KernelDeadlock'],
    );
    assert.deepEqual(h.tainted, ['KernelDeadlock=False']);
    assert.deepEqual(h.events, [['kernel', [event]]]);
    assert.equal(h.statuses.length, 1);
    assert.equal(h.statuses[0]?.[0], status);
    assert.equal(h.statuses[0]?.[1], MONITOR, 'the status outlet learns which monitor reported it');
  });

  it('merges an aggregated type across sources (worst wins), and passes others through', () => {
    const h = setup(['Shared']);
    h.detector.onStatus({ source: 'b', conditions: [cond('Shared', 'True', 'Broken')], events: [] }, MONITOR);
    h.detector.onStatus({ source: 'a', conditions: [cond('Shared', 'False', 'Fine')], events: [] }, MONITOR);
    assert.deepEqual(
      h.managed.map((c) => [c.status, c.reason]),
      [
        ['True', 'Broken'],
        ['True', 'Broken'],
      ],
    );
  });

  it('logs a condition once per change of status or reason; a first report only when True', () => {
    const h = setup();
    const status = (c: Condition) => ({ source: 'kernel', conditions: [c], events: [] });
    h.detector.onStatus(status(cond('X', 'False', 'OK')), MONITOR);
    h.detector.onStatus(status(cond('X', 'False', 'OK')), MONITOR);
    h.detector.onStatus(status(cond('X', 'True', 'Bad')), MONITOR);
    h.detector.onStatus(status(cond('Y', 'True', 'BadFromTheStart')), MONITOR);
    assert.deepEqual(
      h.logged.filter((l) => l.msg === 'condition').map((l) => [l.status, l.reason]),
      [
        ['True', 'Bad'],
        ['True', 'BadFromTheStart'],
      ],
    );
    assert.deepEqual(
      [...h.detector.conditions()].map((c) => [c.type, c.status]),
      [
        ['X', 'True'],
        ['Y', 'True'],
      ],
    );
  });

  it("logs a raised condition's evidence; a condition without one logs none", () => {
    const h = setup();
    const evidence = { source: 'kernel', plugin: 'kmsg', trust: 'kernel' } as const;
    const status = (c: Condition) => ({ source: 'kernel', conditions: [c], events: [] });
    h.detector.onStatus(status({ ...cond('X', 'True', 'Bad'), evidence }), MONITOR);
    h.detector.onStatus(status(cond('Y', 'True', 'Restored')), MONITOR);
    assert.deepEqual(
      h.logged.filter((l) => l.msg === 'condition').map((l) => [l.condition, l.evidence]),
      [
        ['X', evidence],
        ['Y', undefined],
      ],
    );
  });

  it('remembers which source last reported each condition', () => {
    const h = setup();
    h.detector.onStatus({ source: 'one', conditions: [cond('A', 'True', 'Bad')], events: [] }, MONITOR);
    h.detector.onStatus({ source: 'two', conditions: [cond('B', 'False', 'OK')], events: [] }, MONITOR);
    assert.deepEqual(
      h.detector.conditionsOf('one').map((c) => c.type),
      ['A'],
    );
    assert.deepEqual(h.detector.conditionsOf('three'), []);
  });

  it("gives each owner of an aggregated type its own last report, not the merge nor another's", () => {
    const h = setup(['GPU']);
    const report = (source: string, c: Condition) =>
      h.detector.onStatus({ source, conditions: [c], events: [] }, MONITOR);
    report('nvml', cond('GPU', 'True', 'NvidiaXID79Error'));
    report('kernel', cond('GPU', 'False', 'GPUIsHealthy'));
    // The merge is the True one, and 'kernel' reported last: each still gets what it said itself.
    assert.deepEqual(
      h.detector.conditionsOf('nvml').map((c) => [c.status, c.reason]),
      [['True', 'NvidiaXID79Error']],
    );
    assert.deepEqual(
      h.detector.conditionsOf('kernel').map((c) => [c.status, c.reason]),
      [['False', 'GPUIsHealthy']],
    );
  });
});
