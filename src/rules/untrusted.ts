import type { Counter, Registry } from 'prom-client';
import { counter } from '../core/metrics.ts';
import type { LogLine, QuotedSpan } from '../core/types.ts';

/**
 * Stands in for each character of a quoted span (docs/rules.md, "Who wrote the text"). ASCII SUB: `.`,
 * `\S` and negated classes match it, so a rule about the trusted writer's own words still matches
 * around a span (`task [\S ]+:\w+ blocked` fires whatever the task's name), while no literal and no
 * `\w` does, so a rule that needs the quoted text itself cannot match the masked copy.
 */
export const FILLER = '\x1a';

/** A source's classifier: the spans a message quotes from user space, or undefined when none. */
export type QuotedClassifier = (message: string) => readonly QuotedSpan[] | undefined;

/**
 * The quoted spans of lines and the text rules may take as evidence, worked out only when asked (the
 * engine asks only about lines a rule matched, so the other lines cost nothing): a line's own
 * `quoted`, else its source's classifier's answer, each once per line.
 */
export class QuotedText {
  private readonly classify: QuotedClassifier | undefined;
  private readonly spans = new WeakMap<LogLine, readonly QuotedSpan[] | null>();
  private readonly masked = new WeakMap<LogLine, string>();

  constructor(classify?: QuotedClassifier) {
    this.classify = classify;
  }

  spansOf(line: LogLine): readonly QuotedSpan[] | undefined {
    if (line.quoted !== undefined || this.classify === undefined) return nonEmpty(line.quoted);
    let spans = this.spans.get(line);
    if (spans === undefined) {
      spans = nonEmpty(this.classify(line.message)) ?? null;
      this.spans.set(line, spans);
    }
    return spans ?? undefined;
  }

  has(line: LogLine): boolean {
    return this.spansOf(line) !== undefined;
  }

  /** The message with its quoted spans masked, same length; the message itself when it has none. */
  trusted(line: LogLine): string {
    const spans = this.spansOf(line);
    if (spans === undefined) return line.message;
    let text = this.masked.get(line);
    if (text === undefined) {
      text = maskSpans(line.message, spans);
      this.masked.set(line, text);
    }
    return text;
  }
}

function nonEmpty(spans: readonly QuotedSpan[] | undefined): readonly QuotedSpan[] | undefined {
  return spans !== undefined && spans.length > 0 ? spans : undefined;
}

/** `text` with each span's characters replaced by FILLER; spans may overlap or come in any order. */
export function maskSpans(text: string, spans: readonly QuotedSpan[]): string {
  const sorted = [...spans].sort((a, b) => a[0] - b[0]);
  let out = '';
  let at = 0;
  for (const [start, end] of sorted) {
    const from = Math.max(at, Math.max(0, start));
    const to = Math.min(text.length, end);
    if (to <= from) continue;
    out += text.slice(at, from) + FILLER.repeat(to - from);
    at = to;
  }
  return out + text.slice(at);
}

/**
 * npd_log_lines_untrusted_total{source,rule}: a rule's match thrown away because its evidence was text
 * an untrusted writer chose, inside a quoted span here (the journald source's untrusted writers count
 * in the same family). `rule` is the rule's reason as configured (a template unexpanded), so the series
 * are bounded by the rule set.
 */
export function untrustedMatches(registry: Registry): Counter<'source' | 'rule'> {
  return counter(registry, {
    name: 'npd_log_lines_untrusted_total',
    help: 'Rule matches discarded because the matched text came from an untrusted writer.',
    labelNames: ['source', 'rule'],
  });
}
