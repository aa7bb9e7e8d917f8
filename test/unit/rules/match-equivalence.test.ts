/**
 * Randomized equivalence, in the spirit of NPD's TestMatchEquivalence: the optimized matcher (newest
 * line only for lastLineOnly patterns, required-literal prefilter) must agree with NPD's plain matcher,
 * which joins the whole buffer with "\n" and searches `(?:expr)\z` unanchored.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { RE2JS } from 're2js';
import type { LogLine } from '../../../src/core/types.ts';
import type { LogRuleConfig } from '../../../src/rules/config.ts';
import { LogBuffer } from '../../../src/rules/log-buffer.ts';
import { LogRuleEngine } from '../../../src/rules/log-engine.ts';
import { compilePattern } from '../../../src/rules/pattern.ts';
import { SET_MIN_WORK } from '../../../src/rules/pattern-set.ts';
import { Prefilter } from '../../../src/rules/prefilter.ts';
import { kmsgConfig } from './log-engine-helpers.ts';
import { genLine, genPattern, type Rng, rng } from './random-rules.ts';

/** NPD's log_buffer.go: search the joined buffer, then count lines back until the match start is covered. */
function npdMatch(
  re: RE2JS,
  lines: readonly LogLine[],
): { text: string; lines: LogLine[]; onSeparator: boolean } | undefined {
  const joined = lines.map((l) => l.message).join('\n');
  const m = re.matcher(joined);
  if (!m.find()) return undefined;
  const s = joined.length - m.start() - 1;
  let total = 0;
  const matched: LogLine[] = [];
  for (let i = lines.length - 1; i >= 0; i--) {
    matched.unshift(lines[i] as LogLine);
    total += (lines[i] as LogLine).message.length + 1;
    if (total > s) break;
  }
  return { text: m.group(0) ?? '', lines: matched, onSeparator: joined[m.start()] === '\n' };
}

describe('randomized match equivalence (fixed seed)', () => {
  it("LogBuffer.match agrees with NPD's whole-buffer matcher on thousands of cases", () => {
    const r = rng(0x5eed1);
    const stats = {
      cases: 0,
      checks: 0,
      matches: 0,
      multiLine: 0,
      lastLineOnly: 0,
      literal: 0,
      literalSets: 0,
      separator: 0,
    };
    while (stats.cases < 3000) {
      const pattern = genPattern(r);
      let re: RE2JS;
      try {
        re = RE2JS.compile(`(?:${pattern})\\z`);
      } catch {
        continue; // the grammar can produce e.g. a repeated empty group that RE2 rejects
      }
      const compiled = compilePattern(pattern);
      stats.cases++;
      if (compiled.lastLineOnly) stats.lastLineOnly++;
      if (compiled.literal) stats.literal++;
      if ((compiled.literal?.texts.length ?? 0) > 1) stats.literalSets++;
      const size = 1 + r.int(4);
      const buffer = new LogBuffer(size);
      const window: LogLine[] = [];
      const pushes = 1 + r.int(8);
      for (let i = 0; i < pushes; i++) {
        const line = { timestamp: i, message: genLine(r) };
        buffer.push(line);
        window.push(line);
        if (window.length > size) window.shift();
        const want = npdMatch(re, window);
        const got = buffer.match(compiled);
        const where = `pattern ${JSON.stringify(pattern)}, buffer ${JSON.stringify(window.map((l) => l.message))}`;
        stats.checks++;
        assert.equal(got !== undefined, want !== undefined, `matched differs: ${where}`);
        if (!got || !want) continue;
        stats.matches++;
        assert.equal(got.match.groups[0], want.text, `matched text differs: ${where}`);
        if (want.onSeparator) stats.separator++;
        if (want.lines.length > 1) stats.multiLine++;
        assert.deepEqual(got.lines, want.lines, `matched lines differ: ${where}`);
      }
    }
    // The generator must actually exercise every path, or the equivalence proves nothing.
    assert.ok(stats.checks > 10_000, JSON.stringify(stats));
    assert.ok(stats.matches > 1_000, JSON.stringify(stats));
    assert.ok(stats.multiLine > 100, JSON.stringify(stats));
    assert.ok(stats.lastLineOnly > 500 && stats.lastLineOnly < stats.cases - 500, JSON.stringify(stats));
    assert.ok(stats.literal > 200, JSON.stringify(stats));
    assert.ok(stats.literalSets > 50, JSON.stringify(stats));
  });

  it('Prefilter never drops a pattern that NPD would match with the line as newest', () => {
    const r = rng(0xf11e);
    let dropped = 0;
    for (let round = 0; round < 400; round++) {
      const patterns: string[] = [];
      while (patterns.length < 6) {
        const p = genPattern(r);
        try {
          RE2JS.compile(`(?:${p})\\z`);
          patterns.push(p);
        } catch {}
      }
      const res = patterns.map((p) => RE2JS.compile(`(?:${p})\\z`));
      const pf = new Prefilter(patterns.map(compilePattern));
      for (let i = 0; i < 20; i++) {
        const history = [genLine(r), genLine(r)];
        const line = r.chance(0.3) ? `${genLine(r)}xab${genLine(r)}` : genLine(r);
        const candidates = pf.candidates(line);
        res.forEach((re, k) => {
          if (candidates[k]) return;
          dropped++;
          const joined = [...history, line].join('\n');
          assert.equal(
            re.matcher(joined).find(),
            false,
            `dropped ${JSON.stringify(patterns[k])} for ${JSON.stringify(joined)}`,
          );
        });
      }
    }
    assert.ok(dropped > 500, `only ${dropped} patterns were ever dropped`);
  });

  it('LogRuleEngine with prefilter and literals equals an unoptimized twin and a brute-force NPD model', () => {
    const { events } = engineAgainstTwin(0xe6e, 300, (r) => (r.chance(0.2) ? 'xab' : genLine(r)));
    assert.ok(events > 500, `only ${events} events`);
  });

  it('the same on lines long enough for the combined pattern set to screen the rules', () => {
    const { events, screened } = engineAgainstTwin(0x5e7, 80, (r, filler) =>
      r.chance(0.2) ? `${filler}xab` : `${filler}${genLine(r)}`,
    );
    assert.ok(events > 700, `only ${events} events`);
    assert.ok(screened > 400, `the set screened only ${screened} lines`);
  });
});

/**
 * Runs random rule sets over random lines through the engine and through a twin with every shortcut
 * defeated, and checks both against a brute-force model of NPD. `screened` counts the lines on which
 * the engine's PatternSet pass runs (two or more of its members are candidates on a long line).
 */
function engineAgainstTwin(
  seed: number,
  rounds: number,
  makeLine: (r: Rng, filler: string) => string,
): { events: number; screened: number } {
  const r = rng(seed);
  let events = 0;
  let screened = 0;
  for (let round = 0; round < rounds; round++) {
    const rules = randomRules(r);
    const conditions = [
      { type: 'C0', reason: 'Fine0', message: 'ok0' },
      { type: 'C1', reason: 'Fine1', message: 'ok1' },
    ];
    const config = kmsgConfig(rules, conditions, 1 + r.int(4));
    // `(?:^)?(?:p)` means the same as p, but it has no literal and may "cross lines", so the twin
    // searches the whole joined buffer for every rule on every line, with nothing skipped.
    const twinConfig = {
      ...config,
      rules: rules.map((rule) => ({ ...rule, pattern: `(?:^)?(?:${rule.pattern})` })),
    };
    const optimized = new LogRuleEngine(config, 0);
    const twin = new LogRuleEngine(twinConfig, 0);
    const compiled = rules.map((rule) => compilePattern(rule.pattern));
    const prefilter = new Prefilter(compiled);
    const res = rules.map((rule) => RE2JS.compile(`(?:${rule.pattern})\\z`));
    const filler = randomFiller(r, SET_MIN_WORK + 64);
    const window: string[] = [];
    const active = new Map<string, string>();
    for (let i = 0; i < 15; i++) {
      const line = { timestamp: 1000 + i, message: makeLine(r, filler) };
      window.push(line.message);
      if (window.length > config.bufferSize) window.shift();
      const candidates = prefilter.candidates(line.message);
      const k = compiled.filter((c, n) => candidates[n] && c.lastLineOnly && c.regexTest).length;
      if (k >= 2 && (k - 1) * line.message.length >= SET_MIN_WORK) screened++;
      const a = optimized.process(line);
      const b = twin.process(line);
      assert.deepEqual(a, b, `round ${round} line ${i}: ${JSON.stringify(rules.map((x) => x.pattern))}`);
      // Brute force: which rules fire, and in which order.
      const expected: string[] = [];
      res.forEach((re, n) => {
        const rule = rules[n] as LogRuleConfig;
        if (!re.matcher(window.join('\n')).find()) return;
        if (rule.type === 'temporary') expected.push(rule.reason);
        else if (active.get(rule.condition as string) !== rule.reason) {
          active.set(rule.condition as string, rule.reason);
          expected.push(rule.reason);
        }
      });
      assert.deepEqual(a?.status.events.map((e) => e.reason) ?? [], expected);
      events += expected.length;
    }
  }
  return { events, screened };
}

function randomRules(r: Rng): LogRuleConfig[] {
  const rules: LogRuleConfig[] = [];
  while (rules.length < 5) {
    const pattern = genPattern(r);
    if (compilePatternOrUndefined(pattern) === undefined) continue;
    rules.push(
      r.chance(0.3)
        ? { type: 'permanent', condition: `C${r.int(2)}`, reason: `P${rules.length}`, pattern }
        : { type: 'temporary', reason: `T${rules.length}`, pattern },
    );
  }
  return rules;
}

/** Characters of the generated lines, without newlines, so the line's random end decides the match. */
function randomFiller(r: Rng, length: number): string {
  let s = '';
  while (s.length < length) s += genLine(r).replaceAll('\n', ' ');
  return s;
}

function compilePatternOrUndefined(p: string): unknown {
  try {
    return compilePattern(p);
  } catch {
    return undefined;
  }
}
