import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { DEFAULT_LRU_SIZE, Lru } from '../../../../src/events/record/lru.ts';

describe('Lru', () => {
  it('defaults to 4096 entries, and treats zero as the default', () => {
    assert.equal(new Lru().capacity, DEFAULT_LRU_SIZE);
    assert.equal(DEFAULT_LRU_SIZE, 4096);
    assert.equal(new Lru(0).capacity, 4096);
  });

  it('evicts the least recently added key when full', () => {
    const lru = new Lru<string, number>(2);
    lru.add('a', 1);
    lru.add('b', 2);
    lru.add('c', 3);
    assert.equal(lru.size, 2);
    assert.equal(lru.has('a'), false);
    assert.deepEqual([...lru.keys()], ['b', 'c']);
  });

  it('counts get as use, so a read key survives the next eviction', () => {
    const lru = new Lru<string, number>(2);
    lru.add('a', 1);
    lru.add('b', 2);
    assert.equal(lru.get('a'), 1);
    lru.add('c', 3);
    assert.deepEqual([...lru.keys()], ['a', 'c']);
  });

  it('counts re-adding as use and replaces the value', () => {
    const lru = new Lru<string, number>(2);
    lru.add('a', 1);
    lru.add('b', 2);
    lru.add('a', 10);
    lru.add('c', 3);
    assert.equal(lru.peek('a'), 10);
    assert.equal(lru.has('b'), false);
  });

  it('peek does not refresh recency', () => {
    const lru = new Lru<string, number>(2);
    lru.add('a', 1);
    lru.add('b', 2);
    assert.equal(lru.peek('a'), 1);
    lru.add('c', 3);
    assert.equal(lru.has('a'), false);
  });
});
