import assert from 'node:assert/strict';
import { Writable } from 'node:stream';
import { describe, it } from 'node:test';
import pino from 'pino';
import { ProblemDetector } from '../../../src/agent/detector.ts';
import type { Condition, ProblemEvent } from '../../../src/core/types.ts';

const cond = (type: string, status: Condition['status'], reason: string): Condition => ({
  type,
  status,
  reason,
  message: `${type} ${reason}`,
  transition: 0,
});

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
  const detector = new ProblemDetector({
    logger,
    aggregated: new Set(aggregated),
    outlets: {
      conditions: [(c) => managed.push(c), (c) => tainted.push(`${c.type}=${c.status}`)],
      events: [(source, e) => events.push([source, e])],
    },
  });
  return { detector, logged, managed, tainted, events };
}

describe('ProblemDetector', () => {
  it('fans every condition out to every outlet and the events to the event outlet', () => {
    const h = setup();
    const event: ProblemEvent = { severity: 'warn', timestamp: 5, reason: 'OOMKilling', message: 'oom' };
    h.detector.onStatus({
      source: 'kernel',
      conditions: [cond('KernelDeadlock', 'False', 'OK')],
      events: [event],
    });
    assert.deepEqual(
      h.managed.map((c) => c.type),
      ['KernelDeadlock'],
    );
    assert.deepEqual(h.tainted, ['KernelDeadlock=False']);
    assert.deepEqual(h.events, [['kernel', [event]]]);
  });

  it('merges an aggregated type across sources (worst wins), and passes others through', () => {
    const h = setup(['Shared']);
    h.detector.onStatus({ source: 'b', conditions: [cond('Shared', 'True', 'Broken')], events: [] });
    h.detector.onStatus({ source: 'a', conditions: [cond('Shared', 'False', 'Fine')], events: [] });
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
    h.detector.onStatus(status(cond('X', 'False', 'OK')));
    h.detector.onStatus(status(cond('X', 'False', 'OK')));
    h.detector.onStatus(status(cond('X', 'True', 'Bad')));
    h.detector.onStatus(status(cond('Y', 'True', 'BadFromTheStart')));
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

  it('remembers which source last reported each condition', () => {
    const h = setup();
    h.detector.onStatus({ source: 'one', conditions: [cond('A', 'True', 'Bad')], events: [] });
    h.detector.onStatus({ source: 'two', conditions: [cond('B', 'False', 'OK')], events: [] });
    assert.deepEqual(
      h.detector.conditionsOf('one').map((c) => c.type),
      ['A'],
    );
    assert.deepEqual(h.detector.conditionsOf('three'), []);
  });
});
