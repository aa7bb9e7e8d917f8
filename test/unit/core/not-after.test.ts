import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { notAfter } from '../../../src/core/not-after.ts';

const NOW = Date.UTC(2026, 11, 4);

describe('notAfter', () => {
  it('moves what is stamped after now to now, tells of each with its own time, keeps the rest', () => {
    const told: number[] = [];
    const items = [
      { timestamp: NOW - 1, id: 'a' },
      { timestamp: Date.UTC(2035, 0, 1), id: 'b' },
      { timestamp: NOW, id: 'c' },
    ];
    const out = notAfter(items, NOW, (item) => told.push(item.timestamp));
    assert.deepEqual(out, [
      { timestamp: NOW - 1, id: 'a' },
      { timestamp: NOW, id: 'b' },
      { timestamp: NOW, id: 'c' },
    ]);
    assert.deepEqual(told, [Date.UTC(2035, 0, 1)]);
    assert.equal(items[1]?.timestamp, Date.UTC(2035, 0, 1), 'the input is not changed');
  });

  it('control: nothing in the future gives the input itself and tells of nothing', () => {
    const items = [{ timestamp: NOW - 5 }, { timestamp: NOW }];
    let told = 0;
    assert.equal(
      notAfter(items, NOW, () => told++),
      items,
    );
    assert.equal(told, 0);
  });
});
