import type { Evidence } from '../core/evidence.ts';
import type { LogLine, ProblemEvent, Severity, XidOccurrence } from '../core/types.ts';
import type { LogRuleConfig } from './config.ts';
import type { CompiledPattern } from './pattern.ts';
import { type QuotedClassifier, QuotedText } from './untrusted.ts';

/** What a log engine knows of its lines beyond their text. */
export interface LineContext {
  /** The source's classifier of quoted text (untrusted.ts), asked on a match. */
  readonly quotedSpans?: QuotedClassifier | undefined;
  /** What a raised problem carries; none when absent. */
  readonly evidence?: LineEvidence | undefined;
  /** Reads the occurrence a rule marked `occurrence` reports; none when absent. */
  readonly occurrences?: OccurrenceReader | undefined;
}

/** An occurrence a match reports (core/types.ts), and a note for the message that names what the line does not. */
export interface NamedOccurrence {
  readonly occurrence: XidOccurrence;
  /** e.g. `uuid=GPU-…`, appended to the message as `; <note>`; absent when the line says it all. */
  readonly note?: string | undefined;
}

/** The monitor's reader of occurrences (monitors/system-log/xid-occurrence.ts), asked on a marked rule's match. */
export interface OccurrenceReader {
  of(rule: LogRuleConfig, lines: readonly LogLine[]): NamedOccurrence | undefined;
}

/** A rule's match: its lines, the reason and message it gives, its evidence and the occurrence it reports. */
export interface Hit {
  readonly lines: readonly LogLine[];
  readonly reason: string;
  readonly message: string;
  readonly evidence: Evidence | undefined;
  readonly occurrence?: XidOccurrence | undefined;
}

/**
 * The evidence of a log rule's match (core/evidence.ts): the monitor's own (source, plugin, trust of its
 * writer), the journal writer of the newest matched line, and, under --trust-quoted-text, whether the
 * match needed text the writer quotes from user space, which only the flag let count.
 */
export class LineEvidence {
  private readonly base: Evidence;
  /** The classifier --trust-quoted-text turned off, asked again only for a match's lines. */
  private readonly flagged: QuotedText | undefined;

  constructor(base: Evidence, flaggedQuotes?: QuotedClassifier) {
    this.base = base;
    this.flagged = flaggedQuotes ? new QuotedText(flaggedQuotes) : undefined;
  }

  of(pattern: CompiledPattern, lines: readonly LogLine[]): Evidence {
    const writer = lines[lines.length - 1]?.writer;
    const e = writer === undefined ? this.base : { ...this.base, writer };
    if (!this.flagged || !lines.some((l) => this.flagged?.has(l))) return e;
    const masked = lines.map((l) => this.flagged?.trusted(l) ?? l.message).join('\n');
    return pattern.test(masked) ? e : { ...e, trust: 'trusted-by-flag', flag: '--trust-quoted-text' };
  }
}

/** `o` with its evidence, or `o` itself when there is none (so it compares equal to one without). */
export function withEvidence<T extends object>(o: T, evidence: Evidence | undefined): T {
  return evidence === undefined ? o : { ...o, evidence };
}

/** A temporary rule's event, with the evidence of its match and the occurrence it reports. */
export function hitEvent(severity: Severity, timestamp: number, hit: Hit): ProblemEvent {
  const event = withEvidence({ severity, timestamp, reason: hit.reason, message: hit.message }, hit.evidence);
  return hit.occurrence === undefined ? event : { ...event, occurrence: hit.occurrence };
}
