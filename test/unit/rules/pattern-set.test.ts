import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { RE2JS } from 're2js';
import { LineBytes } from '../../../src/rules/line-bytes.ts';
import { compilePattern } from '../../../src/rules/pattern.ts';
import { PatternSet, SET_MIN_WORK } from '../../../src/rules/pattern-set.ts';
import { genLine, genPattern, type Rng, rng } from './random-rules.ts';

function randomPatterns(r: Rng, n: number): string[] {
  const out: string[] = [];
  while (out.length < n) {
    const p = genPattern(r);
    try {
      compilePattern(p);
      out.push(p);
    } catch {}
  }
  return out;
}

describe('PatternSet', () => {
  it("answers exactly as each member's NPD match would, for any candidates (randomized, fixed seed)", () => {
    const r = rng(0x5e75);
    const stats = { screens: 0, members: 0, matched: 0, dropped: 0 };
    for (let round = 0; round < 300; round++) {
      const patterns = randomPatterns(r, 6);
      const compiled = patterns.map(compilePattern);
      const npd = patterns.map((p) => RE2JS.compile(`(?:${p})\\z`));
      const set = new PatternSet(compiled, 0);
      for (let i = 0; i < 10; i++) {
        const line = r.chance(0.3) ? `${genLine(r)}xab${genLine(r)}` : genLine(r).repeat(1 + r.int(3));
        const candidates = patterns.map(() => r.chance(0.8));
        const verdict = set.screen(line, new LineBytes(), candidates);
        const members = compiled.filter((c, k) => candidates[k] && c.lastLineOnly && c.regexTest);
        if (!verdict) {
          assert.equal(members.length, 0, `no screen with members for ${JSON.stringify(line)}`);
          continue;
        }
        stats.screens++;
        compiled.forEach((c, k) => {
          const where = `${JSON.stringify(patterns[k])} on ${JSON.stringify(line)}`;
          if (!(c.lastLineOnly && c.regexTest) || !candidates[k]) {
            assert.equal(verdict[k], candidates[k], `non-member or non-candidate changed: ${where}`);
            return;
          }
          stats.members++;
          const want = npd[k]?.matcher(line).find() ?? false;
          assert.equal(verdict[k], want, `verdict differs from NPD's match: ${where}`);
          assert.equal(c.test(line, new LineBytes()), want, `test differs from NPD's match: ${where}`);
          if (want) stats.matched++;
          else stats.dropped++;
        });
      }
    }
    assert.ok(stats.screens > 1000, JSON.stringify(stats));
    assert.ok(stats.matched > 500 && stats.dropped > 500, JSON.stringify(stats));
  });

  it('leaves a short line to single tests and screens a long one', () => {
    const patterns = ['disk \\w+ failed.*', 'disk \\w+ (?:offline|gone)'].map(compilePattern);
    const set = new PatternSet(patterns);
    const both = [true, true];
    const short = 'disk sda offline';
    assert.equal(set.screen(short, new LineBytes(), both), undefined);
    const long = `${'x'.repeat(SET_MIN_WORK)} disk sda offline`;
    assert.deepEqual(set.screen(long, new LineBytes(), both), [false, true]);
    // With one candidate left there is nothing to share: its own test is as cheap.
    assert.equal(set.screen(long, new LineBytes(), [false, true]), undefined);
  });

  it('has no members for plain and multi-line patterns, which it cannot answer', () => {
    const patterns = ['Out of memory.*', 'a\\nb', '(?s)x.y'].map(compilePattern);
    const long = 'y'.repeat(4 * SET_MIN_WORK);
    assert.equal(new PatternSet(patterns).screen(long, new LineBytes(), [true, true, true]), undefined);
  });

  it('counts each screen that falls back to single tests because RE2 would not build or run the set', () => {
    const patterns = ['disk \\w+ failed.*', 'disk \\w+ (?:offline|gone)'].map(compilePattern);
    const long = `${'x'.repeat(SET_MIN_WORK)} disk sda offline`;
    const both = [true, true];
    const unbuilt = new PatternSet(patterns, SET_MIN_WORK, () => undefined);
    assert.equal(unbuilt.screen(long, new LineBytes(), both), undefined);
    assert.equal(
      unbuilt.screen('disk sda offline', new LineBytes(), both),
      undefined,
      'short: no set wanted',
    );
    assert.equal(unbuilt.fallbacks(), 1);
    const outOfMemory = new PatternSet(patterns, SET_MIN_WORK, () => ({
      match: () => {
        throw new Error('RE2.Set: out of memory');
      },
    }));
    assert.equal(outOfMemory.screen(long, new LineBytes(), both), undefined);
    assert.equal(outOfMemory.fallbacks(), 1);
    const real = new PatternSet(patterns);
    assert.deepEqual(real.screen(long, new LineBytes(), both), [false, true]);
    assert.equal(real.fallbacks(), 0);
  });
});
