/**
 * The journald and filelog rule sets: each shipped file's engine over the golden inputs written for
 * it (test/golden/cases, real wordings with look-alikes between them), repeated to a long log, and
 * the worst 64 KiB non-matching line per file. A journald file sees only the entries its matches
 * select (each journald monitor runs its own journalctl), so each file is timed on its own lines.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { loadConfigs } from '../../src/config/load.ts';
import type { LogLine } from '../../src/core/types.ts';
import { systemLogConfigKind } from '../../src/monitors/system-log/schema.ts';
import { parseReplayInput, type ReplayFormat, type ReplayLine } from '../../src/replay/parse-input.ts';
import type { LogMonitorConfig } from '../../src/rules/config.ts';
import { LogRuleEngine } from '../../src/rules/log-engine.ts';
import { journalMatches, passesJournalMatches } from '../../src/sources/journald/args.ts';
import { adversarialWorstCases } from './rule-engine.bench.ts';

const ROOT = join(import.meta.dirname, '..', '..');
const CASES = join(ROOT, 'test', 'golden', 'cases');

export interface RuleSetTiming {
  readonly file: string;
  readonly plugin: string;
  readonly rules: number;
  /** Distinct input lines, and lines timed (the input repeated). */
  readonly distinct: number;
  readonly lines: number;
  readonly nsPerLine: number;
  readonly results: number;
  /** The slowest rule of the file on a 64 KiB line it does not match. */
  readonly worstMs: number;
  readonly worstReason: string;
}

interface GoldenCase {
  readonly configs: readonly string[];
  readonly format: ReplayFormat;
}

/** Every shipped journald and filelog file, with the golden inputs that exercise it. */
export function journalAndFilelogRuleSets(lineCount = 100_000): RuleSetTiming[] {
  const cases = readdirSync(CASES).map((name) => ({
    dir: join(CASES, name),
    spec: JSON.parse(readFileSync(join(CASES, name, 'case.json'), 'utf8')) as GoldenCase,
  }));
  // Probe files are not log rules; the plugin line tells them apart before the schema does.
  const files = readdirSync(join(ROOT, 'rules')).filter(
    (f) =>
      f.endsWith('.yaml') &&
      /^plugin: (?:journald|filelog)$/m.test(readFileSync(join(ROOT, 'rules', f), 'utf8')),
  );
  const out: RuleSetTiming[] = [];
  for (const name of files.sort()) {
    const file = `rules/${name}`;
    const config = loadConfigs([{ file: join(ROOT, file) }], [systemLogConfigKind])[0]?.config as
      | LogMonitorConfig
      | undefined;
    if (!config || (config.plugin !== 'journald' && config.plugin !== 'filelog')) continue;
    const input = cases
      .filter((c) => c.spec.configs.includes(file))
      .flatMap(
        (c) => parseReplayInput(readFileSync(join(c.dir, 'input.log'), 'utf8'), c.spec.format, 0).lines,
      )
      .filter((l) => selects(config, l));
    if (input.length === 0) continue;
    out.push(time(file, config, input, lineCount));
  }
  return out;
}

/** What the file's journalctl matches would give it; filelog and non-journal lines all pass. */
function selects(config: LogMonitorConfig, line: ReplayLine): boolean {
  if (config.plugin !== 'journald' || !line.fromJournal) return true;
  const matches = journalMatches({ identifier: config.pluginConfig.source, unit: config.pluginConfig.unit });
  return passesJournalMatches(matches, { SYSLOG_IDENTIFIER: line.identifier, _SYSTEMD_UNIT: line.unit });
}

function time(
  file: string,
  config: LogMonitorConfig,
  input: readonly ReplayLine[],
  count: number,
): RuleSetTiming {
  // One line a second: frequency rules' windows move as they would on a busy node.
  const corpus: LogLine[] = [];
  for (let i = 0; i < count; i++)
    corpus.push({ timestamp: i * 1000, message: (input[i % input.length] as ReplayLine).message });
  let best = Number.POSITIVE_INFINITY;
  let results = 0;
  for (let round = 0; round < 5; round++) {
    const engine = new LogRuleEngine(config, 0);
    let n = 0;
    const started = process.hrtime.bigint();
    for (const line of corpus) if (engine.process(line)) n++;
    best = Math.min(best, Number(process.hrtime.bigint() - started) / corpus.length);
    results = n;
  }
  const worst = adversarialWorstCases(64 * 1024, [config]).reduce((a, b) => (b.ms > a.ms ? b : a));
  return {
    file,
    plugin: config.plugin,
    rules: config.rules.length,
    distinct: new Set(input.map((l) => l.message)).size,
    lines: corpus.length,
    nsPerLine: best,
    results,
    worstMs: worst.ms,
    worstReason: worst.reason,
  };
}
