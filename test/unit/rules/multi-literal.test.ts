import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { MultiLiteral } from '../../../src/rules/multi-literal.ts';

/** A tiny deterministic generator so the cross-check covers many shapes on every run. */
function rng(seed: number): () => number {
  let s = seed >>> 0;
  return () => {
    s = (Math.imul(s, 1664525) + 1013904223) >>> 0;
    return s / 2 ** 32;
  };
}

/** The indexes findAll reports for a line. */
function found(set: MultiLiteral, line: string): number[] {
  const marks = new Uint8Array(set.size);
  const count = set.findAll(line, marks);
  const out = [...marks.keys()].filter((i) => marks[i] === 1);
  assert.equal(count, out.length, 'the count matches the marks');
  return out;
}

describe('MultiLiteral (Wu-Manber)', () => {
  it('finds literals at the start, middle and end, and nothing else', () => {
    const set = new MultiLiteral(['Killed process ', 'INFO: rcu_', 'Remounting filesystem read-only']);
    assert.deepEqual(found(set, 'Killed process 12 (java)'), [0]);
    assert.deepEqual(found(set, 'x: INFO: rcu_sched self-detected stall'), [1]);
    assert.deepEqual(found(set, 'EXT4-fs (sda1): Remounting filesystem read-only'), [2]);
    assert.deepEqual(found(set, 'EXT4-fs (sda1): Remounting filesystem read-writ'), []);
    assert.deepEqual(found(set, 'INFO: rcu'), []);
    assert.deepEqual(found(set, ''), []);
  });

  it('reports every literal a line holds, each once, even when they overlap or repeat', () => {
    const set = new MultiLiteral(['Killed process ', 'process 1', 'INFO: rcu_']);
    assert.deepEqual(found(set, 'INFO: rcu_x Killed process 1 Killed process 2 INFO: rcu_y'), [0, 1, 2]);
  });

  it('agrees with a plain includes() scan on random lines, including non-ASCII and hash collisions', () => {
    const next = rng(7);
    const alphabet = 'abcde xyz:[]#_é日';
    const word = (n: number) =>
      Array.from({ length: n }, () => alphabet[Math.floor(next() * alphabet.length)]).join('');
    let hits = 0;
    for (let round = 0; round < 300; round++) {
      const literals = Array.from({ length: 1 + Math.floor(next() * 6) }, () =>
        word(3 + Math.floor(next() * 8)),
      );
      const set = new MultiLiteral(literals);
      for (let k = 0; k < 30; k++) {
        let line = word(Math.floor(next() * 60));
        if (next() < 0.3) line += literals[Math.floor(next() * literals.length)] + word(5);
        const want = [...literals.keys()].filter((i) => line.includes(literals[i] as string));
        if (want.length > 0) hits++;
        assert.deepEqual(found(set, line), want, `${JSON.stringify(literals)} in ${JSON.stringify(line)}`);
      }
    }
    assert.ok(hits > 1000, `the cross-check exercised matches (${hits})`);
  });
});
