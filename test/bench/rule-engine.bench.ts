import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { loadConfigs } from '../../src/config/load.ts';
import { systemLogConfigKind } from '../../src/config/log-monitor-schema.ts';
import type { LogMonitorConfig, LogRuleConfig } from '../../src/config/types.ts';
import { LogRuleEngine } from '../../src/rules/log-engine.ts';
import { compilePattern } from '../../src/rules/pattern.ts';
import { kernelCorpus } from './kernel-corpus.ts';

const ROOT = join(import.meta.dirname, '..', '..');

function shippedKernelConfigs(): LogMonitorConfig[] {
  const files = ['rules/kernel.yaml', 'rules/readonly.yaml'].map((f) => ({ file: join(ROOT, f) }));
  return loadConfigs(files, [systemLogConfigKind], (f) => readFileSync(f, 'utf8')).map(
    (l) => l.config as LogMonitorConfig,
  );
}

/** ns per line for all shipped kernel rules over a mixed log, best of a few runs. */
export function mixedLogNsPerLine(lineCount = 200_000): {
  nsPerLine: number;
  rules: number;
  lines: number;
  problems: number;
} {
  const configs = shippedKernelConfigs();
  // The reader decodes each record from a Buffer, so lines are flat strings; the generator's are ropes.
  const corpus = kernelCorpus(lineCount).map((l) => Buffer.from(l).toString());
  let best = Number.POSITIVE_INFINITY;
  let problems = 0;
  for (let run = 0; run < 5; run++) {
    const engines = configs.map((c) => new LogRuleEngine(c, 0));
    problems = 0;
    const started = process.hrtime.bigint();
    for (let i = 0; i < corpus.length; i++) {
      const line = { timestamp: i, message: corpus[i] as string };
      for (const e of engines) if (e.process(line)) problems++;
    }
    best = Math.min(best, Number(process.hrtime.bigint() - started) / corpus.length);
  }
  const rules = configs.reduce((n, c) => n + c.rules.length, 0);
  return { nsPerLine: best, rules, lines: corpus.length, problems };
}

/** Candidate 64 KiB lines built to get past each rule's literal prefilter and then fail. */
function adversarialLines(rule: LogRuleConfig): string[] {
  const lit = compilePattern(rule.pattern).literal?.text ?? 'a';
  const size = 64 * 1024;
  const rep = (s: string) => s.repeat(Math.ceil(size / s.length)).slice(0, size);
  return [
    `${rep(`${lit} `)}\u0001`,
    rep(lit.slice(0, -1) || 'a'),
    `${lit}${rep('a')}`,
    rep(`${rule.pattern.replace(/[\\^$.*+?()[\]{}|]/g, '')} `),
    rep(' '),
  ];
}

export interface WorstCase {
  readonly reason: string;
  readonly pattern: string;
  readonly ms: number;
}

/** Worst time of one 64 KiB non-matching line per rule, each rule alone in a 1-line buffer. */
export function adversarialWorstCases(): WorstCase[] {
  const out: WorstCase[] = [];
  for (const config of shippedKernelConfigs()) {
    for (const rule of config.rules) {
      const compiled = compilePattern(rule.pattern);
      let worst = 0;
      for (const line of adversarialLines(rule)) {
        if (compiled.exec(line)) continue;
        const started = process.hrtime.bigint();
        compiled.exec(line);
        worst = Math.max(worst, Number(process.hrtime.bigint() - started) / 1e6);
      }
      out.push({ reason: rule.reason, pattern: rule.pattern, ms: worst });
    }
  }
  return out;
}
