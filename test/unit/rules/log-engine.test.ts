/**
 * LogRuleEngine: how matched lines become events and condition changes, as in NPD's system-log-monitor.
 * Frequency (count/window) rules have their own file, log-engine-frequency.test.ts.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { LogRuleConfig } from '../../../src/rules/config.ts';
import { DEADLOCK, engine, line, T0 } from './log-engine-helpers.ts';

const DOCKER_HUNG: LogRuleConfig = {
  type: 'permanent',
  condition: 'KernelDeadlock',
  reason: 'DockerHung',
  pattern: 'task docker:\\w+ blocked for more than \\w+ seconds\\.',
};
const HUNG_LINE = 'task docker:7 blocked for more than 120 seconds.';

describe('LogRuleEngine (NPD system-log-monitor, npd.md §4.1)', () => {
  it('starts with every declared condition False with its defaults', () => {
    const e = engine([DOCKER_HUNG]);
    assert.deepEqual(e.initialStatus(), {
      source: 'kernel-monitor',
      events: [],
      conditions: [
        {
          type: 'KernelDeadlock',
          status: 'False',
          transition: T0,
          reason: 'KernelHasNoDeadlock',
          message: 'kernel has no deadlock',
        },
      ],
    });
    assert.equal(e.process(line('unrelated')), undefined);
  });

  it('turns a temporary match into one Warning event with the matched text, plus the full condition list', () => {
    const e = engine([
      { type: 'temporary', reason: 'OOMKilling', pattern: 'Killed process \\d+ (.+) total-vm:\\d+kB.*' },
    ]);
    const text = 'Killed process 42 (java) total-vm:1024kB, anon-rss:0kB';
    const r = e.process(line(`prefix ${text}`, T0 + 5));
    assert.deepEqual(r?.status.events, [
      { severity: 'warn', timestamp: T0 + 5, reason: 'OOMKilling', message: `prefix ${text}` },
    ]);
    assert.deepEqual(r?.counted, ['OOMKilling']);
    assert.deepEqual(r?.gauges, []);
    assert.equal(r?.status.conditions.length, 1);
    assert.equal(r?.status.conditions[0]?.status, 'False');
  });

  it('gives a Normal event for a temporary rule with severity info, still counted for problem_counter', () => {
    const e = engine([
      { type: 'temporary', reason: 'KubeletStart', pattern: 'Started kubelet\\.', severity: 'info' },
    ]);
    const r = e.process(line('Started kubelet.', T0 + 5));
    assert.deepEqual(r?.status.events, [
      { severity: 'info', timestamp: T0 + 5, reason: 'KubeletStart', message: 'Started kubelet.' },
    ]);
    assert.deepEqual(r?.counted, ['KubeletStart']);
  });

  it("raises a permanent condition False→True at the first matched line's time with NPD's event message", () => {
    const e = engine([DOCKER_HUNG]);
    const r = e.process(line(HUNG_LINE, T0 - 60_000)); // replayed from lookback: before the engine started
    assert.deepEqual(r?.status.conditions, [
      {
        type: 'KernelDeadlock',
        status: 'True',
        transition: T0 - 60_000,
        reason: 'DockerHung',
        message: HUNG_LINE,
      },
    ]);
    assert.deepEqual(r?.status.events, [
      {
        severity: 'warn',
        timestamp: T0 - 60_000,
        reason: 'DockerHung',
        message: `Node condition KernelDeadlock is now: True, reason: DockerHung, message: "${HUNG_LINE}"`,
      },
    ]);
    assert.deepEqual(r?.counted, ['DockerHung']);
    assert.deepEqual(r?.gauges, [{ type: 'KernelDeadlock', reason: 'DockerHung', active: true }]);
  });

  it('quotes the condition message like Go %q (quotes, backslashes, newlines)', () => {
    const e = engine([{ ...DOCKER_HUNG, pattern: 'say "hi" \\\\ there\\nnext' }]);
    e.process(line('say "hi" \\ there', T0 + 1));
    const r = e.process(line('next', T0 + 2));
    assert.equal(
      r?.status.events[0]?.message,
      'Node condition KernelDeadlock is now: True, reason: DockerHung, message: "say \\"hi\\" \\\\ there\\nnext"',
    );
    assert.equal(r?.status.conditions[0]?.message, 'say "hi" \\ there\nnext');
    assert.equal(r?.status.conditions[0]?.transition, T0 + 1);
  });

  it('ignores the same reason again (message and transition unchanged), but reports a different reason and keeps its transition', () => {
    const other: LogRuleConfig = {
      type: 'permanent',
      condition: 'KernelDeadlock',
      reason: 'OtherHung',
      pattern: 'other hang \\d+',
    };
    const e = engine([DOCKER_HUNG, other]);
    e.process(line(HUNG_LINE, T0 + 1));
    assert.equal(e.process(line('task docker:8 blocked for more than 240 seconds.', T0 + 2)), undefined);
    assert.deepEqual(e.conditions()[0], {
      type: 'KernelDeadlock',
      status: 'True',
      transition: T0 + 1,
      reason: 'DockerHung',
      message: HUNG_LINE,
    });
    const r = e.process(line('other hang 9', T0 + 3));
    assert.equal(r?.status.events.length, 1);
    assert.equal(r?.status.events[0]?.reason, 'OtherHung');
    // Issue 39: the status held, so lastTransitionTime (a repair controller's clock) stays.
    assert.deepEqual(r?.status.conditions[0], {
      type: 'KernelDeadlock',
      status: 'True',
      transition: T0 + 1,
      reason: 'OtherHung',
      message: 'other hang 9',
    });
    assert.deepEqual(r?.gauges, [{ type: 'KernelDeadlock', reason: 'OtherHung', active: true }]);
  });

  it('joins every line a multi-line match overlaps, and dates the event by the first one', () => {
    const e = engine([{ type: 'temporary', reason: 'Multi', pattern: 'begin \\d+\\n(?:.*\\n)*end' }]);
    assert.equal(e.process(line('noise', T0 + 1)), undefined);
    assert.equal(e.process(line('xx begin 12', T0 + 2)), undefined);
    assert.equal(e.process(line('middle', T0 + 3)), undefined);
    const r = e.process(line('end', T0 + 4));
    assert.deepEqual(r?.status.events, [
      { severity: 'warn', timestamp: T0 + 2, reason: 'Multi', message: 'xx begin 12\nmiddle\nend' },
    ]);
  });

  it('appends patternGeneratedMessageSuffix as "<text>; <suffix>"', () => {
    const e = engine([
      {
        type: 'temporary',
        reason: 'IOError',
        pattern: 'Buffer I/O error .*',
        patternGeneratedMessageSuffix: 'see runbook',
      },
      { ...DOCKER_HUNG, patternGeneratedMessageSuffix: 'restart docker' },
    ]);
    assert.equal(
      e.process(line('Buffer I/O error on sda'))?.status.events[0]?.message,
      'Buffer I/O error on sda; see runbook',
    );
    const r = e.process(line(HUNG_LINE));
    assert.equal(r?.status.conditions[0]?.message, `${HUNG_LINE}; restart docker`);
    assert.match(r?.status.events[0]?.message ?? '', /message: "task docker:7 .*; restart docker"$/);
  });

  it('reports temporary and permanent matches of one line in rule order', () => {
    const e = engine([
      {
        type: 'temporary',
        reason: 'TaskHung',
        pattern: 'task \\S+:\\w+ blocked for more than \\w+ seconds\\.',
      },
      DOCKER_HUNG,
    ]);
    const r = e.process(line(HUNG_LINE));
    assert.deepEqual(
      r?.status.events.map((ev) => [ev.severity, ev.reason]),
      [
        ['warn', 'TaskHung'],
        ['warn', 'DockerHung'],
      ],
    );
    assert.deepEqual(r?.counted, ['TaskHung', 'DockerHung']);
  });

  it('does nothing for a permanent rule whose condition is not declared', () => {
    const e = engine([{ ...DOCKER_HUNG, condition: 'Undeclared' }]);
    assert.equal(e.process(line(HUNG_LINE)), undefined);
  });

  it('recovers through recoverPattern with a Normal event, only while its own reason is active', () => {
    const e = engine([{ ...DOCKER_HUNG, recoverPattern: 'docker recovered' }]);
    assert.equal(e.process(line('docker recovered', T0 + 1)), undefined);
    e.process(line(HUNG_LINE, T0 + 2));
    const r = e.process(line('docker recovered', T0 + 3));
    assert.deepEqual(r?.status.conditions[0], { ...DEADLOCK, status: 'False', transition: T0 + 3 });
    assert.deepEqual(r?.status.events, [
      {
        severity: 'info',
        timestamp: T0 + 3,
        reason: 'KernelHasNoDeadlock',
        message:
          'Node condition KernelDeadlock is now: False, reason: KernelHasNoDeadlock, message: "kernel has no deadlock"',
      },
    ]);
    assert.deepEqual(r?.counted, []);
    assert.deepEqual(r?.gauges, [{ type: 'KernelDeadlock', reason: 'DockerHung', active: false }]);
  });

  it('clears a condition through clearAfter on tick(), counted from the last matching line', () => {
    const e = engine([DOCKER_HUNG], [{ ...DEADLOCK, clearAfterMs: 600_000 }]);
    assert.equal(e.tick(T0 + 10_000_000), undefined);
    e.process(line(HUNG_LINE, T0));
    e.process(line(HUNG_LINE, T0 + 300_000)); // same reason: no event, but it extends the hold
    assert.equal(e.tick(T0 + 600_000), undefined);
    assert.equal(e.tick(T0 + 899_999), undefined);
    const r = e.tick(T0 + 900_000);
    assert.equal(r?.status.conditions[0]?.status, 'False');
    assert.equal(r?.status.conditions[0]?.transition, T0 + 900_000);
    assert.equal(r?.status.events[0]?.severity, 'info');
    assert.equal(e.tick(T0 + 2_000_000), undefined);
  });

  it('restore() overrides only an owned condition', () => {
    const e = engine([DOCKER_HUNG]);
    e.restore({
      type: 'KernelDeadlock',
      status: 'True',
      transition: 5,
      reason: 'DockerHung',
      message: 'old',
    });
    e.restore({ type: 'NotMine', status: 'True', transition: 5, reason: 'X', message: 'y' });
    assert.deepEqual(
      e.conditions().map((c) => [c.type, c.status, c.message]),
      [['KernelDeadlock', 'True', 'old']],
    );
    assert.equal(e.process(line(HUNG_LINE)), undefined);
  });
});
