import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { formatGoDuration, parseGoDuration } from '../../../src/gocompat/duration.ts';

/** Values Go's time.ParseDuration accepts, in milliseconds. */
const VALID: readonly [string, number][] = [
  ['0', 0],
  ['-0', 0],
  ['+0', 0],
  ['0s', 0],
  ['5m', 300_000],
  ['1h30m', 5_400_000],
  ['1.5s', 1_500],
  ['300ms', 300],
  ['2h45m30.5s', 2 * 3_600_000 + 45 * 60_000 + 30_500],
  ['-1s', -1_000],
  ['+5s', 5_000],
  ['.5s', 500],
  ['5.s', 5_000],
  ['1h1h', 7_200_000],
  ['86400s', 86_400_000],
  ['1000us', 1],
  ['1000µs', 1],
  ['1000μs', 1],
  ['1000000ns', 1],
];

/** Inputs Go's time.ParseDuration rejects. */
const INVALID: readonly string[] = [
  '5',
  'm',
  '5x',
  '',
  '1h-5m',
  '-',
  '+',
  '.',
  '.s',
  '00',
  '1.5',
  '1.5.s',
  '5 m',
  'ms5',
];

describe('parseGoDuration (Go time.ParseDuration)', () => {
  for (const [input, ms] of VALID) {
    it(`parses ${JSON.stringify(input)} as ${ms} ms`, () => {
      const got = parseGoDuration(input);
      assert.ok(!(got instanceof Error), `unexpected error: ${String(got)}`);
      assert.ok(Math.abs(got - ms) < 1e-9, `got ${got}`);
    });
  }

  for (const input of INVALID) {
    it(`rejects ${JSON.stringify(input)} with an Error naming the problem`, () => {
      const got = parseGoDuration(input);
      assert.ok(got instanceof Error, `expected an Error, got ${String(got)}`);
      assert.ok(got.message.length > 0);
    });
  }

  it('rejects surrounding whitespace as Go does', {}, () => {
    assert.ok(parseGoDuration(' 5m') instanceof Error);
    assert.ok(parseGoDuration('5m ') instanceof Error);
  });

  it('rejects durations that overflow int64 nanoseconds as Go does', {}, () => {
    assert.ok(parseGoDuration('3000000h') instanceof Error);
  });
});

describe('formatGoDuration (Go Duration.String)', () => {
  const CASES: readonly [number, string][] = [
    [0, '0s'],
    [250, '250ms'],
    [1_500, '1.5s'],
    [300_000, '5m0s'],
    [5_400_000, '1h30m0s'],
    [90_061_000, '25h1m1s'],
    [-1_000, '-1s'],
  ];
  for (const [ms, text] of CASES) {
    it(`formats ${ms} ms as ${text}`, () => assert.equal(formatGoDuration(ms), text));
  }

  it('round-trips through parseGoDuration', () => {
    for (const ms of [1, 999, 1_000, 61_000, 3_600_000, 5_430_500]) {
      assert.equal(parseGoDuration(formatGoDuration(ms)), ms);
    }
  });

  it('formats sub-millisecond values in µs as Go does', {}, () => {
    assert.equal(formatGoDuration(0.5), '500µs');
  });
});
