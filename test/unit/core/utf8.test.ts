import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { cutUtf8, truncateUtf8 } from '../../../src/core/utf8.ts';

describe('UTF-8 cuts', () => {
  it('cuts bytes only between characters', () => {
    const bytes = Buffer.from('aé€😀z');
    const cuts = [1, 2, 3, 5, 6, 9, 10, 11, 99].map((max) => cutUtf8(bytes, max).toString());
    assert.deepEqual(cuts, ['a', 'a', 'aé', 'aé', 'aé€', 'aé€', 'aé€😀', 'aé€😀z', 'aé€😀z']);
  });

  it('keeps short text and never splits a character', () => {
    assert.deepEqual(truncateUtf8('abc', 3), { text: 'abc', truncated: false });
    assert.deepEqual(truncateUtf8('ab✓', 4), { text: 'ab', truncated: true });
    assert.deepEqual(truncateUtf8('ab✓', 5), { text: 'ab✓', truncated: false });
    assert.deepEqual(truncateUtf8('aé€', 5), { text: 'aé', truncated: true });
    assert.deepEqual(truncateUtf8('aé€', 6), { text: 'aé€', truncated: false });
  });
});
