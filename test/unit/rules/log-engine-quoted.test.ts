/**
 * The engine and LogLine.quoted: a match counts only if the text with the quoted spans masked matches
 * too; otherwise it is discarded and named in result.untrusted. Each refusal has its control: the same
 * line with no spans (as a trusted writer's own words) does what it always did.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { LogLine } from '../../../src/core/types.ts';
import { FILLER, maskSpans } from '../../../src/rules/untrusted.ts';
import { engine, T0 } from './log-engine-helpers.ts';

const HUNG = 'INFO: task docker:20744 blocked for more than 120 seconds.';
/** "docker", as the kmsg source marks a hung task's name. */
const hung = (timestamp = T0 + 1000): LogLine => ({ timestamp, message: HUNG, quoted: [[11, 17]] });

const DOCKER_HUNG = {
  type: 'permanent' as const,
  condition: 'KernelDeadlock',
  reason: 'DockerHung',
  pattern: 'task docker:\\w+ blocked for more than \\w+ seconds\\.',
};

describe('quoted spans in the rule engine', () => {
  it('a rule that needs the quoted name is discarded and named; without spans it raises', () => {
    const quoted = engine([DOCKER_HUNG]).process(hung());
    assert.deepEqual(quoted?.untrusted, ['DockerHung']);
    assert.deepEqual(quoted?.status.events, []);
    assert.equal(quoted?.status.conditions[0]?.status, 'False');
    const plain = engine([DOCKER_HUNG]).process({ timestamp: T0 + 1000, message: HUNG });
    assert.equal(plain?.status.conditions[0]?.status, 'True', 'control: the same text as evidence');
    assert.equal(plain?.untrusted, undefined);
  });

  it("a rule about the writer's own words matches around the span", () => {
    const rule = {
      type: 'temporary' as const,
      reason: 'TaskHung',
      pattern: 'task [\\S ]+:\\w+ blocked for more than \\w+ seconds\\.',
    };
    const result = engine([rule]).process(hung());
    assert.deepEqual(
      result?.status.events.map((e) => [e.reason, e.message]),
      [['TaskHung', HUNG]],
      'the event carries the line as read, not the masked copy',
    );
    assert.equal(result?.untrusted, undefined);
  });

  it('a recovery line inside a span clears nothing; the same words as evidence do', () => {
    const rules = [{ ...DOCKER_HUNG, recoverPattern: 'docker recovered' }];
    const e = engine(rules);
    e.process({ timestamp: T0 + 1000, message: HUNG });
    const recovery = 'x[1]: segfault at 0 ip 0 sp 0 error 6 in docker recovered[1+2]';
    const quoted = e.process({
      timestamp: T0 + 2000,
      message: recovery,
      quoted: [
        [0, 1],
        [41, 57],
      ],
    });
    assert.equal(quoted, undefined, 'no change, and nothing to count: a recovery is no rule match');
    assert.equal(e.conditions()[0]?.status, 'True');
    e.process({ timestamp: T0 + 3000, message: 'docker recovered' });
    assert.equal(e.conditions()[0]?.status, 'False', 'control');
  });

  it('a multi-line rule sees the spans of every buffered line', () => {
    const rule = { type: 'temporary' as const, reason: 'Pair', pattern: 'first docker\\nsecond' };
    const e = engine([rule]);
    e.process({ timestamp: T0 + 1000, message: 'first docker', quoted: [[6, 12]] });
    const quoted = e.process({ timestamp: T0 + 2000, message: 'second' });
    assert.deepEqual(quoted?.untrusted, ['Pair']);
    const c = engine([rule]);
    c.process({ timestamp: T0 + 1000, message: 'first docker' });
    assert.deepEqual(
      c.process({ timestamp: T0 + 2000, message: 'second' })?.status.events.map((ev) => ev.reason),
      ['Pair'],
      'control',
    );
  });

  it('a templated reason takes its groups from the masked text', () => {
    // A rule's reason template, not a JavaScript one.
    const reason = ['Seg$', '{1}'].join('');
    const rule = { type: 'temporary' as const, reason, pattern: 'segfault at (\\w+) ip .*' };
    const message = 'docker[1]: segfault at 0 ip 0 sp 0 error 6 in segfault at x ip [1+2]';
    const result = engine([rule]).process({
      timestamp: T0 + 1000,
      message,
      quoted: [
        [0, 6],
        [46, 62],
      ],
    });
    assert.deepEqual(
      result?.status.events.map((e) => e.reason),
      ['Seg0'],
      'the kernel\'s address, not the name\'s "x"',
    );
  });
});

describe('maskSpans', () => {
  it('keeps the length and masks each span, in any order, overlapping or out of range', () => {
    const masked = maskSpans('abcdefgh', [
      [5, 7],
      [1, 3],
      [2, 4],
      [6, 100],
    ]);
    assert.equal(masked, `a${FILLER.repeat(3)}e${FILLER.repeat(3)}`);
    assert.equal(maskSpans('abc', []), 'abc');
  });
});
