/**
 * Runs every case of the labelled corpus (test/corpus/*.yaml, see corpus.ts) through replay and
 * checks the outputs exactly. Then, per rule file the corpus names: every rule, run on its own,
 * matches at least one problem line labelled with it, and has at least one benign look-alike.
 */
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import type { LogMonitorConfig } from '../../../src/rules/config.ts';
import {
  type CorpusCase,
  type CorpusFile,
  expectedSummary,
  loadCorpus,
  loadRuleFile,
  nearList,
  onlyRule,
  ruleKey,
  runCase,
  summarise,
} from './corpus.ts';

const corpus = loadCorpus();

for (const file of corpus) {
  describe(`corpus ${file.name}`, () => {
    const configs = file.configs.map(loadRuleFile);
    const reasons = new Set(configs.flatMap((c) => c.rules.map((r) => r.reason)));
    file.cases.forEach((c, i) => {
      test(`#${i + 1} ${c.text.slice(0, 90)}`, () => {
        assert.deepEqual(summarise(runCase(file, c, configs)), expectedSummary(c), c.source);
        if (c.expect === 'none') {
          assert.ok(c.near, 'a look-alike names the rule it resembles (near: Reason)');
          for (const r of nearList(c))
            assert.ok(reasons.has(r), `near: ${r} is no rule of ${file.configs.join(', ')}`);
        }
      });
    });
  });
}

interface Use {
  readonly file: CorpusFile;
  readonly c: CorpusCase;
}

/** Every case of every corpus file that names the rule file. */
function usesOf(path: string): Use[] {
  return corpus
    .filter((f) => f.configs.includes(path))
    .flatMap((file) => file.cases.map((c) => ({ file, c })));
}

function coverage(path: string, config: LogMonitorConfig): string[] {
  const uses = usesOf(path);
  const gaps: string[] = [];
  config.rules.forEach((rule, i) => {
    const key = ruleKey(rule);
    const alone = [onlyRule(config, rule)];
    const hit = uses.some(
      ({ file, c }) => expectedSummary(c).includes(key) && summarise(runCase(file, c, alone)).includes(key),
    );
    if (!hit)
      gaps.push(`rule #${i + 1} (${key}, /${rule.pattern}/) matches no problem line labelled with it`);
    if (!uses.some(({ c }) => c.expect === 'none' && nearList(c).includes(rule.reason)))
      gaps.push(`rule #${i + 1} (${key}) has no look-alike (near: ${rule.reason})`);
  });
  return gaps;
}

describe('corpus coverage', () => {
  for (const path of [...new Set(corpus.flatMap((f) => f.configs))].sort()) {
    test(`every rule of ${path} has a problem line and a look-alike`, () => {
      assert.deepEqual(coverage(path, loadRuleFile(path)), []);
    });
  }
});
