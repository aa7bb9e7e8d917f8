import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { loadConfigs } from '../../src/config/load.ts';
import { FakeClock } from '../../src/core/clock.ts';
import { createRegistry } from '../../src/core/metrics.ts';
import type { LogLine } from '../../src/core/types.ts';
import { ProblemMetrics } from '../../src/metrics/problem-metrics.ts';
import { SystemLogMonitor } from '../../src/monitors/system-log/monitor.ts';
import { systemLogConfigKind } from '../../src/monitors/system-log/schema.ts';
import type { LogMonitorConfig, LogRuleConfig } from '../../src/rules/config.ts';
import { LogRuleEngine } from '../../src/rules/log-engine.ts';
import { compilePattern } from '../../src/rules/pattern.ts';
import { sharedScan } from '../../src/rules/shared-scan.ts';
import { SourceHub } from '../../src/sources/hub.ts';
import type { LinesHandler, LogSource } from '../../src/sources/source.ts';
import { kernelCorpus } from './kernel-corpus.ts';

const ROOT = join(import.meta.dirname, '..', '..');

/** The shipped kmsg files that share one reader in the agent (kernel-counter has its own lookback). */
export const SHARED_KMSG_FILES = [
  'rules/kernel.yaml',
  'rules/readonly.yaml',
  'rules/hardware.yaml',
  'rules/gpu.yaml',
  'rules/storage.yaml',
  'rules/network.yaml',
];

function shippedKernelConfigs(): LogMonitorConfig[] {
  const files = SHARED_KMSG_FILES.map((f) => ({ file: join(ROOT, f) }));
  return loadConfigs(files, [systemLogConfigKind], (f) => readFileSync(f, 'utf8')).map(
    (l) => l.config as LogMonitorConfig,
  );
}

export interface MixedLog {
  /** ns per line in the rule engines, with one literal scan per line shared by all, as the agent runs. */
  readonly engines: number;
  /** ns per line from the shared reader on: SourceHub, each SystemLogMonitor, metrics, statuses. */
  readonly shared: number;
  /** ns per line with each monitor's engine scanning every line itself, as NPD's monitors do. */
  readonly alone: number;
  readonly rules: number;
  readonly lines: number;
  readonly problems: number;
}

const BATCH = 64;

/** ns per line for all shipped kernel rules over a mixed log, best of a few runs. */
export function mixedLogNsPerLine(lineCount = 200_000): MixedLog {
  const configs = shippedKernelConfigs();
  // The reader decodes each record from a Buffer, so lines are flat strings; the generator's are ropes.
  const corpus = kernelCorpus(lineCount).map((l) => Buffer.from(l).toString());
  // Interleaved, so that JIT warm-up favours none of the three.
  const [engines, shared, alone] = bestOf(15, [
    () => sharedEngines(configs, corpus),
    () => throughHub(configs, corpus),
    () => engineByEngine(configs, corpus),
  ]) as [Run, Run, Run];
  const rules = configs.reduce((n, c) => n + c.rules.length, 0);
  const lines = corpus.length;
  return {
    engines: engines.ns,
    shared: shared.ns,
    alone: alone.ns,
    rules,
    lines,
    problems: engines.problems,
  };
}

interface Run {
  readonly ns: number;
  readonly problems: number;
}

function bestOf(rounds: number, variants: readonly (() => Run)[]): Run[] {
  const best = variants.map(() => ({ ns: Number.POSITIVE_INFINITY, problems: 0 }));
  for (let round = 0; round < rounds; round++) {
    variants.forEach((once, i) => {
      const r = once();
      if (r.ns < (best[i] as Run).ns) best[i] = r;
    });
  }
  return best;
}

/** The agent's path: a source shared through SourceHub feeding each SystemLogMonitor in batches. */
function throughHub(configs: readonly LogMonitorConfig[], corpus: readonly string[]) {
  let push: LinesHandler = () => {};
  const source: LogSource = {
    start: (onLines) => {
      push = onLines;
    },
    stop: async () => {},
    health: () => ({ up: true, healthy: true, detail: '' }),
  };
  const hub = new SourceHub();
  const registry = createRegistry();
  const deps = { clock: new FakeClock(0), registry, problemMetrics: new ProblemMetrics(registry) };
  let problems = 0;
  for (const c of configs) {
    void new SystemLogMonitor(
      c,
      hub.share('kmsg', () => source),
      deps,
    ).start((s) => {
      problems += s.events.length;
    });
  }
  const started = process.hrtime.bigint();
  for (let i = 0; i < corpus.length; i += BATCH) push(linesOf(corpus, i));
  return { ns: Number(process.hrtime.bigint() - started) / corpus.length, problems };
}

/** The engines alone, fed as SourceHub feeds them: batches, one scan per line for all engines. */
function sharedEngines(configs: readonly LogMonitorConfig[], corpus: readonly string[]) {
  const engines = configs.map((c) => new LogRuleEngine(c, 0));
  const scan = sharedScan(engines.map((e) => e.literals()));
  if (!scan) throw new Error('the shipped kernel rules have literals');
  let problems = 0;
  const started = process.hrtime.bigint();
  for (let i = 0; i < corpus.length; i += BATCH) {
    const batch = linesOf(corpus, i);
    const found = batch.map((l) => scan.find(l.message));
    for (const e of engines) problems += e.processScanned(batch, found, scan).length;
  }
  return { ns: Number(process.hrtime.bigint() - started) / corpus.length, problems };
}

/** What a reader delivers: a batch of fresh line objects. */
function linesOf(corpus: readonly string[], from: number): LogLine[] {
  const batch: LogLine[] = [];
  for (let j = from; j < Math.min(from + BATCH, corpus.length); j++) {
    batch.push({ timestamp: j, message: corpus[j] as string });
  }
  return batch;
}

function engineByEngine(configs: readonly LogMonitorConfig[], corpus: readonly string[]) {
  const engines = configs.map((c) => new LogRuleEngine(c, 0));
  let problems = 0;
  const started = process.hrtime.bigint();
  for (let i = 0; i < corpus.length; i++) {
    const line = { timestamp: i, message: corpus[i] as string };
    for (const e of engines) if (e.process(line)) problems++;
  }
  return { ns: Number(process.hrtime.bigint() - started) / corpus.length, problems };
}

/** Candidate lines of `size` characters built to get past each rule's literal prefilter and then fail. */
function adversarialLines(rule: LogRuleConfig, size: number): string[] {
  const lit = compilePattern(rule.pattern).literal?.texts[0] ?? 'a';
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

/**
 * Worst time of one non-matching line per rule (64 KiB unless told), each rule alone in a 1-line
 * buffer; the shipped kmsg rules unless other configs are given. 8 KiB is the most one /dev/kmsg record can hold (the kernel's CONSOLE_EXT_LOG_MAX read
 * buffer; a record's text is at most 1 KiB before \xNN escaping).
 */
export function adversarialWorstCases(
  size = 64 * 1024,
  configs: readonly LogMonitorConfig[] = shippedKernelConfigs(),
): WorstCase[] {
  const out: WorstCase[] = [];
  for (const config of configs) {
    for (const rule of config.rules) {
      // The engine's own path: prefilter, then a yes/no match or, for templated rules, submatches.
      const alone = { ...config, bufferSize: 1, rules: [rule] };
      let worst = 0;
      for (const message of adversarialLines(rule, size)) {
        if (compilePattern(rule.pattern).exec(message)) continue;
        const engine = new LogRuleEngine(alone, 0);
        engine.process({ timestamp: 0, message });
        // Best of three: a non-matching line leaves the engine as it was, and GC pauses are not the rule's.
        let best = Number.POSITIVE_INFINITY;
        for (let t = 1; t <= 3; t++) {
          const started = process.hrtime.bigint();
          engine.process({ timestamp: t, message });
          best = Math.min(best, Number(process.hrtime.bigint() - started) / 1e6);
        }
        worst = Math.max(worst, best);
      }
      out.push({ reason: rule.reason, pattern: rule.pattern, ms: worst });
    }
  }
  return out;
}

export interface LineThroughAll {
  /** Non-matching lines timed, and lines left out because some rule matches them. */
  readonly lines: number;
  readonly matching: number;
  readonly worstMs: number;
  readonly medianMs: number;
  /** The first characters of the worst line. */
  readonly worst: string;
}

/**
 * What one non-matching line costs the agent: every rule's adversarial lines, plus lines holding every
 * rule's literal (the line that gets past every prefilter), each fed to all shipped kmsg engines
 * through one shared scan, as SourceHub feeds them. Rounds go over all lines in turn, so no cache
 * holds a line from one timing to the next; best of 3 timings per line, worst over the lines.
 */
export function adversarialThroughAll(size = 64 * 1024): LineThroughAll {
  const configs = shippedKernelConfigs();
  const rules = configs.flatMap((c) => c.rules);
  const literals = rules.flatMap((r) => compilePattern(r.pattern).literal?.texts ?? []);
  const rep = (s: string) => s.repeat(Math.ceil(size / s.length)).slice(0, size);
  const shapes = [
    ...rules.flatMap((r) => adversarialLines(r, size)),
    `${rep(`${literals.join('\n')}\n`)}\n`,
    `${rep(`${literals.join(' ')} `)}\n`,
    rep(`${literals.join(' ')} `),
  ];
  // The reader decodes each record from a Buffer, so lines are flat strings.
  const messages = [...new Set(shapes)].map((s) => Buffer.from(s).toString());
  const engines = configs.map((c) => new LogRuleEngine(c, 0));
  const scan = sharedScan(engines.map((e) => e.literals()));
  if (!scan) throw new Error('the shipped kernel rules have literals');
  const feed = (message: string, t: number): number => {
    const batch = [{ timestamp: t, message }];
    const found = [scan.find(message)];
    return engines.reduce((n, e) => n + e.processScanned(batch, found, scan).length, 0);
  };
  // A line some rule matches is no adversary (and would change the engines' state).
  const quiet = messages.filter((m) => rules.every((r) => !compilePattern(r.pattern).exec(m)));
  const best = quiet.map(() => Number.POSITIVE_INFINITY);
  for (let round = 0; round < 4; round++) {
    quiet.forEach((message, i) => {
      const started = process.hrtime.bigint();
      if (feed(message, round) > 0) throw new Error('a quiet line matched');
      const ms = Number(process.hrtime.bigint() - started) / 1e6;
      if (round > 0) best[i] = Math.min(best[i] as number, ms);
    });
  }
  const worstAt = best.indexOf(Math.max(...best));
  const sorted = [...best].sort((a, b) => a - b);
  return {
    lines: quiet.length,
    matching: messages.length - quiet.length,
    worstMs: best[worstAt] as number,
    medianMs: sorted[Math.floor(sorted.length / 2)] as number,
    worst: JSON.stringify((quiet[worstAt] as string).slice(0, 60)),
  };
}
