import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { formatRatio, median, percent, renderTable } from '../../bench/vs-npd-table.ts';

describe('vs-npd table', () => {
  it('gives this agent / NPD, with fewer decimals the larger it is', () => {
    assert.equal(formatRatio(400, 12), '0.030x');
    assert.equal(formatRatio(46, 89), '1.9x');
    assert.equal(formatRatio(0.001, 1), '1000x');
    assert.equal(formatRatio(100, 25), '0.25x');
  });

  it('says n/a rather than dividing by zero or by a figure not measured', () => {
    assert.equal(formatRatio(0, 2), 'n/a');
    assert.equal(formatRatio(Number.NaN, 2), 'n/a');
    assert.equal(formatRatio(3, Number.NaN), 'n/a');
  });

  it('takes the middle of an odd sample and the mean of the middle two of an even one', () => {
    assert.equal(median([516, 106, 120, 90, 300]), 120);
    assert.equal(median([4, 1, 3, 2]), 2.5);
    assert.ok(Number.isNaN(median([])));
  });

  it('prints per cents with more digits when small', () => {
    assert.equal(percent(1), '100%');
    assert.equal(percent(0), '0%');
    assert.equal(percent(0.991), '99.1%');
    assert.equal(percent(0.0005), '0.050%');
  });

  it('renders one markdown row per figure, a ratio per sub-measure, and marks what was not measured', () => {
    const table = renderTable([
      {
        label: 'detected at 5k / 20k',
        npd: [0.05, 0.003],
        ours: [1, 0.991],
        format: percent,
        oursNote: 'lost 0 / 12',
        load: 'load 1.00 1.00 1.00 on 2 cores',
      },
      {
        label: 'VmHWM a | b',
        npd: [50 * 1024, Number.NaN],
        ours: [100 * 1024, 103 * 1024],
        format: (v) => `${v}`,
        load: '',
      },
    ]);
    const lines = table.split('\n');
    assert.equal(lines.length, 4);
    assert.equal(lines[0], '| | NPD v1.36.0 | this agent | this agent / NPD | load |');
    assert.equal(
      lines[2],
      '| detected at 5k / 20k | 5.0% / 0.30% | 100% / 99.1% (lost 0 / 12) | 20x / 330x | load 1.00 1.00 1.00 on 2 cores |',
    );
    assert.equal(lines[3], '| VmHWM a \\| b | 51200 / not measured | 102400 / 105472 | 2.0x / n/a |  |');
  });
});
