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

/** One masked copy per line, made only for lines that have spans (most have none). */
const maskedText = new WeakMap<LogLine, string>();

/** The text rules may take as evidence: the message with its quoted spans masked, same length. */
export function trustedText(line: LogLine): string {
  const spans = line.quoted;
  if (spans === undefined || spans.length === 0) return line.message;
  let text = maskedText.get(line);
  if (text === undefined) {
    text = maskSpans(line.message, spans);
    maskedText.set(line, text);
  }
  return text;
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

/** A line carries quoted spans. */
export function hasQuoted(line: LogLine): boolean {
  return line.quoted !== undefined && line.quoted.length > 0;
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
