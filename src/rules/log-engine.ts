import type { Condition, CountedReason, LogLine, ProblemEvent, Status } from '../core/types.ts';
import { conditionChangeEvent } from './condition-event.ts';
import { ConditionTable, ruleReasons } from './condition-table.ts';
import type { LogMonitorConfig, LogRuleConfig } from './config.ts';
import { type Hit, hitEvent, type LineContext, withEvidence } from './evidence.ts';
import { FrequencyWindow } from './frequency.ts';
import { LineBytes } from './line-bytes.ts';
import { type BufferMatch, LogBuffer } from './log-buffer.ts';
import { type CompiledPattern, compilePattern } from './pattern.ts';
import { PatternSet } from './pattern-set.ts';
import { Prefilter } from './prefilter.ts';
import type { SharedScan } from './shared-scan.ts';
import { catchAllReason, expandTemplate, isTemplate } from './template.ts';

export interface GaugeChange {
  readonly type: string;
  readonly reason: string;
  readonly active: boolean;
  /** The rule's reason template, when `reason` was expanded from one. */
  readonly template?: string | undefined;
}

/** What one step of the engine produced; `counted` feeds problem_counter, `gauges` problem_gauge. */
export interface EngineResult {
  readonly status: Status;
  readonly counted: readonly CountedReason[];
  readonly gauges: readonly GaugeChange[];
  /** Reasons of rules whose match needed quoted text (LogLine.quoted, untrusted.ts), discarded. */
  readonly untrusted?: readonly string[];
}

interface CompiledRule {
  readonly config: LogRuleConfig;
  readonly pattern: CompiledPattern;
  readonly recover: CompiledPattern | undefined;
  readonly revert: CompiledPattern | undefined;
  readonly window: FrequencyWindow | undefined;
  /** The reason or message refers to capture groups. */
  readonly templated: boolean;
  /** For a templated reason: the template and its catch-all, for the metrics' series cap. */
  readonly reasonTemplate: { readonly template: string; readonly catchAll: string } | undefined;
}

interface Step {
  events: ProblemEvent[];
  gauges: GaugeChange[];
  /** Reasons for problem_counter: every temporary rule's event, whatever its severity, and each raise. */
  counted: CountedReason[];
  untrusted: string[];
}

/**
 * NPD's system-log-monitor state machine (npd.md §4.1), pure and synchronous: lines in, Status out.
 * Beyond NPD, a permanent condition can recover through a rule's recoverPattern, its condition's
 * clearAfter, or a frequency rule falling below its threshold.
 */
export class LogRuleEngine {
  private readonly config: LogMonitorConfig;
  private readonly buffer: LogBuffer;
  private readonly rules: readonly CompiledRule[];
  private readonly table: ConditionTable;
  private readonly lastHit = new Map<string, number>();
  private readonly prefilter: Prefilter;
  private readonly patternSet: PatternSet;
  private readonly watchesEveryLine: boolean;
  /** The reason template behind each condition's current True reason, to clear its gauge series. */
  private readonly activeTemplate = new Map<string, string>();
  private readonly context: LineContext;

  /** `context`: the source's quoted-text classifier, a match's evidence and occurrence readers (evidence.ts). */
  constructor(config: LogMonitorConfig, startedAt: number, context: LineContext = {}) {
    this.config = config;
    this.context = context;
    this.buffer = new LogBuffer(config.bufferSize, context.quotedSpans);
    this.rules = config.rules.map(compileRule);
    this.prefilter = new Prefilter(this.rules.map((r) => r.pattern));
    this.patternSet = new PatternSet(this.rules.map((r) => r.pattern));
    this.watchesEveryLine =
      this.rules.some((r) => r.recover !== undefined || r.revert !== undefined) ||
      this.prefilter.none.some((c) => c);
    this.table = new ConditionTable(config.conditions, startedAt, ruleReasons(config.rules));
  }

  /** NPD publishes the default conditions before reading any log. */
  initialStatus(): Status {
    return { source: this.config.source, events: [], conditions: this.conditions() };
  }

  conditions(): Condition[] {
    return this.table.all();
  }

  /**
   * Resumes an owned condition from what the Node shows after a restart, unless a line already changed
   * it since start (a lookback replay knows better than the Node).
   */
  restore(condition: Condition, opts: { force?: boolean } = {}): void {
    this.table.restore(condition, opts.force);
    this.activeTemplate.delete(condition.type);
  }

  /** The literals this engine's prefilter looks for, for a scan shared with other engines. */
  literals(): readonly string[] {
    return this.prefilter.literals;
  }

  /** Lines matched rule by rule because RE2 would not build or run the combined set (ever). */
  setFallbacks(): number {
    return this.patternSet.fallbacks();
  }

  process(line: LogLine): EngineResult | undefined {
    return this.step(line, this.prefilter.candidates(line.message));
  }

  /**
   * As process for each line, with the literal scan already run over the batch by a scan that includes
   * literals(); `found[i]` is line i's. A line without literals never reaches an engine that does not
   * watch every line, which is most of a log.
   */
  processScanned(
    lines: readonly LogLine[],
    found: readonly (Uint8Array | undefined)[],
    scan: SharedScan,
  ): EngineResult[] {
    const results: EngineResult[] = [];
    for (let i = 0; i < lines.length; i++) {
      const marks = found[i];
      if (marks === undefined && !this.watchesEveryLine) continue;
      const result = this.step(lines[i] as LogLine, this.prefilter.candidatesScanned(marks, scan));
      if (result) results.push(result);
    }
    return results;
  }

  private step(line: LogLine, candidates: readonly boolean[]): EngineResult | undefined {
    // The common case: no rule can match and none watches for recovery lines. Then every rule is
    // single-line, so the line needs no place in the buffer either.
    if (candidates === this.prefilter.none && !this.watchesEveryLine) return undefined;
    this.buffer.push(line);
    const bytes = new LineBytes();
    // A long line past several prefilters: one set pass says which of those rules match at all.
    const may = this.patternSet.screen(line.message, bytes, candidates) ?? candidates;
    const step: Step = { events: [], gauges: [], counted: [], untrusted: [] };
    for (let i = 0; i < this.rules.length; i++) {
      const rule = this.rules[i] as CompiledRule;
      if (may[i] || rule.recover || rule.revert) this.apply(rule, line, step, may[i] === true, bytes);
    }
    return this.result(step);
  }

  /** Time-based recovery (clearAfter, frequency windows); call with the clock or replayed time. */
  tick(now: number): EngineResult | undefined {
    const step: Step = { events: [], gauges: [], counted: [], untrusted: [] };
    for (const rule of this.rules) {
      const cond = rule.config.condition;
      if (rule.window && cond && this.isActive(cond, rule.config.reason) && !rule.window.reached(now)) {
        this.clear(cond, now, step);
      }
    }
    for (const [type, def] of this.table.defaultsInOrder()) {
      const since = this.lastHit.get(type);
      const active = this.table.get(type)?.status === 'True';
      if (
        active &&
        def.clearAfterMs !== undefined &&
        since !== undefined &&
        now - since >= def.clearAfterMs
      ) {
        this.clear(type, now, step);
      }
    }
    return this.result(step);
  }

  /** `mayHit` false: the rule's own pattern certainly does not match; only recovery is looked at. */
  private apply(rule: CompiledRule, line: LogLine, step: Step, mayHit: boolean, bytes: LineBytes): void {
    const cfg = rule.config;
    // Recovery and revert lines hide a problem, so quoted text is no evidence for them either.
    if (rule.recover && cfg.condition && this.isActive(cfg.condition, cfg.reason)) {
      if (this.buffer.matchedTrusted(rule.recover, bytes)) this.clear(cfg.condition, line.timestamp, step);
    }
    if (rule.revert && rule.window && this.buffer.matchedTrusted(rule.revert, bytes)) {
      rule.window.revert(line.timestamp);
    }
    const hit = mayHit ? this.hit(rule, bytes, step) : undefined;
    if (!hit) return;
    const first = hit.lines[0] ?? line;
    if (cfg.condition) this.lastHit.set(cfg.condition, line.timestamp);
    if (rule.window) {
      rule.window.hit(line.timestamp);
      if (!rule.window.reached(line.timestamp)) return;
      // A temporary frequency rule reports each burst once, then counts afresh.
      if (cfg.type === 'temporary') rule.window.reset();
    }
    if (cfg.type === 'temporary') {
      step.events.push(hitEvent(cfg.severity ?? 'warn', first.timestamp, hit));
      step.counted.push(countedReason(rule, hit.reason));
    } else if (cfg.condition) {
      this.raise(cfg.condition, rule, hit, first.timestamp, step);
    }
  }

  /**
   * Submatches cost RE2 far more than a yes/no answer, so only templated rules ask for them. Over quoted
   * spans a match counts only if the masked text matches too (whose groups are then used).
   */
  private hit(rule: CompiledRule, bytes: LineBytes, step: Step): Hit | undefined {
    const cfg = rule.config;
    let found = rule.templated ? this.buffer.match(rule.pattern) : undefined;
    let lines = rule.templated ? found?.lines : this.buffer.matchedLines(rule.pattern, bytes);
    if (!lines) return undefined;
    if (this.buffer.quotedIn(rule.pattern)) {
      const trusted = this.buffer.trustedMatch(rule.pattern, rule.templated);
      if (!trusted) return void step.untrusted.push(cfg.reason);
      ({ lines, found } = trusted);
    }
    let message = cfg.message ? expand(cfg.message, found) : joined(lines);
    if (cfg.patternGeneratedMessageSuffix) message = `${message}; ${cfg.patternGeneratedMessageSuffix}`;
    const evidence = this.context.evidence?.of(rule.pattern, lines);
    const named = cfg.occurrence ? this.context.occurrences?.of(cfg, lines) : undefined;
    if (named?.note) message = `${message}; ${named.note}`;
    return { lines, reason: expand(cfg.reason, found), message, evidence, occurrence: named?.occurrence };
  }

  private raise(type: string, rule: CompiledRule, hit: Hit, at: number, step: Step): void {
    const { reason, message, evidence } = hit;
    const current = this.table.get(type);
    if (!current) return;
    if (current.status === 'True' && current.reason === reason) return;
    this.table.set(withEvidence({ type, status: 'True', transition: at, reason, message }, evidence));
    step.events.push(withEvidence(conditionChangeEvent(type, 'True', reason, message, at), evidence));
    step.counted.push(countedReason(rule, reason));
    const template = rule.reasonTemplate?.template;
    step.gauges.push(
      template === undefined ? { type, reason, active: true } : { type, reason, active: true, template },
    );
    if (template === undefined) this.activeTemplate.delete(type);
    else this.activeTemplate.set(type, template);
  }

  private clear(type: string, at: number, step: Step): void {
    const current = this.table.get(type);
    const def = this.table.default(type);
    if (!current || !def || current.status === 'False') return;
    this.table.set({ type, status: 'False', transition: at, reason: def.reason, message: def.message });
    step.events.push(conditionChangeEvent(type, 'False', def.reason, def.message, at));
    const template = this.activeTemplate.get(type);
    const change = { type, reason: current.reason, active: false };
    step.gauges.push(template === undefined ? change : { ...change, template });
    this.activeTemplate.delete(type);
  }

  private isActive(type: string, reason: string): boolean {
    const c = this.table.get(type);
    return c?.status === 'True' && c.reason === reason;
  }

  private result(step: Step): EngineResult | undefined {
    if (step.events.length === 0 && step.gauges.length === 0 && step.untrusted.length === 0) return undefined;
    const status = { source: this.config.source, events: step.events, conditions: this.conditions() };
    const result = { status, counted: step.counted, gauges: step.gauges };
    return step.untrusted.length === 0 ? result : { ...result, untrusted: step.untrusted };
  }
}

function joined(lines: readonly LogLine[]): string {
  return lines.length === 1 ? (lines[0] as LogLine).message : lines.map((l) => l.message).join('\n');
}

function expand(text: string, found: BufferMatch | undefined): string {
  return found && isTemplate(text) ? expandTemplate(text, found.match) : text;
}

function countedReason(rule: CompiledRule, reason: string): CountedReason {
  return rule.reasonTemplate ? { reason, ...rule.reasonTemplate } : reason;
}

function compileRule(config: LogRuleConfig): CompiledRule {
  const reasonTemplate = isTemplate(config.reason)
    ? { template: config.reason, catchAll: catchAllReason(config.reason) }
    : undefined;
  const windowed = config.count !== undefined && config.windowMs !== undefined;
  return {
    config,
    pattern: compilePattern(config.pattern),
    recover: config.recoverPattern ? compilePattern(config.recoverPattern) : undefined,
    revert: config.revertPattern ? compilePattern(config.revertPattern) : undefined,
    window: windowed ? new FrequencyWindow(config.count as number, config.windowMs as number) : undefined,
    templated: isTemplate(config.reason) || (config.message !== undefined && isTemplate(config.message)),
    reasonTemplate,
  };
}
