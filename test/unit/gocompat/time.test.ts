import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import {
  compileGoLayout,
  fixedZone,
  type GoLayout,
  localZone,
  parseGoTime,
} from '../../../src/gocompat/time.ts';

const UTC = fixedZone(0);
const NOW = Date.UTC(2026, 5, 15, 12, 0, 0);

function layout(text: string): GoLayout {
  const l = compileGoLayout(text);
  if (l instanceof Error) throw l;
  return l;
}

function parse(text: string, value: string, nowMs = NOW, zone = UTC): number | Error {
  return parseGoTime(layout(text), value, { nowMs, zone });
}

describe('Go layouts used by NPD configs', () => {
  it('"Jan _2 15:04:05" (syslog, kern.log)', () => {
    assert.equal(parse('Jan _2 15:04:05', 'Jun  3 07:08:09'), Date.UTC(2026, 5, 3, 7, 8, 9));
    assert.equal(parse('Jan _2 15:04:05', 'Jun 13 07:08:09'), Date.UTC(2026, 5, 13, 7, 8, 9));
    // Go's skip lets one layout space match several, so a zero-padded day also parses.
    assert.equal(parse('Jan _2 15:04:05', 'jun 03 07:08:09'), Date.UTC(2026, 5, 3, 7, 8, 9));
  });

  it('"2006-01-02T15:04:05.999999999-07:00" (docker)', () => {
    const l = '2006-01-02T15:04:05.999999999-07:00';
    assert.equal(parse(l, '2026-03-04T05:06:07.123456789-07:00'), Date.UTC(2026, 2, 4, 12, 6, 7, 123));
    assert.equal(parse(l, '2026-03-04T05:06:07+05:30'), Date.UTC(2026, 2, 3, 23, 36, 7));
    assert.match(String(parse(l, '2026-03-04T05:06:07Z')), /cannot|offset|sign/);
  });

  it('"2006-01-02T15:04:05.999999999Z" and Z07:00', () => {
    assert.equal(
      parse('2006-01-02T15:04:05.999999999Z', '2026-03-04T05:06:07.5Z'),
      Date.UTC(2026, 2, 4, 5, 6, 7, 500),
    );
    assert.equal(parse('2006-01-02T15:04:05Z07:00', '2026-03-04T05:06:07Z'), Date.UTC(2026, 2, 4, 5, 6, 7));
    assert.equal(
      parse('2006-01-02T15:04:05Z07:00', '2026-03-04T05:06:07-01:00'),
      Date.UTC(2026, 2, 4, 6, 6, 7),
    );
    assert.equal(
      parse('2006-01-02T15:04:05Z0700', '2026-03-04T05:06:07+0100'),
      Date.UTC(2026, 2, 4, 4, 6, 7),
    );
  });
});

describe('Go layout tokens', () => {
  it('fractions: .000 exact, .999 optional, unmentioned fractions still read', () => {
    assert.equal(
      parse('15:04:05.000', '01:02:03.045', Date.UTC(2026, 0, 1, 5)),
      Date.UTC(2026, 0, 1, 1, 2, 3, 45),
    );
    assert.ok(parse('15:04:05.000', '01:02:03.04') instanceof Error);
    assert.equal(parse('2006 15:04:05', '2026 01:02:03.999'), Date.UTC(2026, 0, 1, 1, 2, 3, 999));
    assert.equal(parse('2006 15:04:05.999', '2026 01:02:03'), Date.UTC(2026, 0, 1, 1, 2, 3));
    assert.equal(parse('2006 15:04:05,000', '2026 01:02:03,250'), Date.UTC(2026, 0, 1, 1, 2, 3, 250));
  });

  it('weekday, long names, 12-hour clock and two-digit years', () => {
    assert.equal(parse('Mon Jan 2 3:04PM 06', 'Tue Mar 3 4:05PM 26'), Date.UTC(2026, 2, 3, 16, 5));
    assert.equal(
      parse('Monday, January 02 03:04 pm 2006', 'friday, MARCH 06 12:30 am 2026'),
      Date.UTC(2026, 2, 6, 0, 30),
    );
    assert.equal(parse('02/01/06', '31/12/69'), Date.UTC(1969, 11, 31));
    assert.ok(parse('Mon Jan 2 2006', 'Xyz Mar 3 2026') instanceof Error);
  });

  it('zone abbreviations: UTC and GMT offsets', () => {
    assert.equal(parse('2006-01-02 15:04:05 MST', '2026-01-02 03:04:05 UTC'), Date.UTC(2026, 0, 2, 3, 4, 5));
    assert.equal(
      parse('2006-01-02 15:04:05 MST', '2026-01-02 03:04:05 GMT+2'),
      Date.UTC(2026, 0, 2, 1, 4, 5),
    );
    const plus3 = fixedZone(3 * 3600);
    assert.equal(
      parse('2006-01-02 15:04:05 MST', '2026-01-02 03:04:05 MSK', NOW, plus3),
      Date.UTC(2026, 0, 2, 0, 4, 5),
    );
    assert.ok(parse('2006 MST', '2026 Utc') instanceof Error);
  });

  it('"_2006" is a literal underscore and a year; day-of-year tokens are refused', () => {
    assert.equal(parse('x_2006', 'x_2026'), Date.UTC(2026, 0, 1));
    assert.match(String(compileGoLayout('2006.002')), /day of year/);
    assert.equal(layout('Jan _2 15:04:05').hasYear, false);
    assert.equal(layout('Jan _2 15:04:05').hasZone, false);
    assert.equal(layout('2006-01-02T15:04:05Z07:00').hasZone, true);
  });

  it('rejects values that do not fit, as Go does', () => {
    for (const [l, v] of [
      ['Jan _2 15:04:05', 'Jun 31 07:08:09'],
      ['Jan _2 15:04:05', 'Jun  3 24:00:00'],
      ['Jan _2 15:04:05', 'Jun  3 07:08:09 trailing'],
      ['Jan _2 15:04:05', 'Jun  3 07:08'],
      ['2006-01-02', '2026-13-01'],
      ['2006-01-02', '2025-02-29'],
      ['15:04:05', '01:2:03'],
    ]) {
      assert.ok(parse(l as string, v as string) instanceof Error, `${v} as ${l}`);
    }
    assert.match(
      String(parse('Jan _2 15:04:05', 'nonsense')),
      /parsing time "nonsense" as "Jan _2 15:04:05"/,
    );
  });
});

describe('year-less layouts', () => {
  it('keep a Dec 31 line read on Jan 1 in the old year (NPD would put it a year ahead)', () => {
    const newYear = Date.UTC(2027, 0, 1, 0, 0, 5);
    assert.equal(parse('Jan _2 15:04:05', 'Dec 31 23:59:59', newYear), Date.UTC(2026, 11, 31, 23, 59, 59));
    assert.equal(parse('Jan _2 15:04:05', 'Jan  1 00:00:04', newYear), Date.UTC(2027, 0, 1, 0, 0, 4));
  });

  it('allow up to a day of clock skew into the future', () => {
    assert.equal(parse('Jan _2 15:04:05', 'Jun 16 11:00:00'), Date.UTC(2026, 5, 16, 11));
    assert.equal(parse('Jan _2 15:04:05', 'Jun 16 13:00:00'), Date.UTC(2025, 5, 16, 13));
  });

  it('accept Feb 29 like Go (year 0 is a leap year), rolling over in a common year', () => {
    assert.equal(parse('Jan _2 15:04:05', 'Feb 29 10:00:00'), Date.UTC(2026, 2, 1, 10));
  });

  it('take the year in the layout zone', () => {
    // 23:30 UTC on Dec 31 is already Jan 1 at +02:00.
    const now = Date.UTC(2026, 11, 31, 23, 30);
    assert.equal(parse('Jan _2 15:04:05 -07:00', 'Jan  1 01:00:00 +02:00', now), Date.UTC(2026, 11, 31, 23));
  });
});

describe('local time', () => {
  it('reads layouts without a zone in the process zone by default', () => {
    const l = layout('2006-01-02 15:04:05.000');
    const expected = new Date(2026, 6, 4, 10, 20, 30, 400).getTime();
    assert.equal(parseGoTime(l, '2026-07-04 10:20:30.400', { nowMs: NOW }), expected);
    assert.equal(localZone().yearAt(expected), 2026);
  });

  it('uses the injected zone for wall-clock times', () => {
    const minus5 = fixedZone(-5 * 3600);
    assert.equal(parse('2006-01-02 15:04', '2026-01-02 03:04', NOW, minus5), Date.UTC(2026, 0, 2, 8, 4));
  });
});
