import type { Evidence } from '../../core/evidence.ts';
import type { LogMonitorConfig } from '../../rules/config.ts';
import { LineEvidence } from '../../rules/evidence.ts';
import { quotedClassifier } from './quoted-matches.ts';

export interface EvidenceFlags {
  /** --trust-quoted-text: a match that needed quoted text counts, and says the flag let it. */
  readonly trustQuotedText?: boolean | undefined;
  /** --trust-journal-writers: journald entries count whoever wrote them, and say so. */
  readonly trustJournalWriters?: boolean | undefined;
  /** --trust-file-writers: a log file's lines count (as `trustedWriter: any`), and say the flag let them. */
  readonly trustFileWriters?: boolean | undefined;
}

/**
 * The evidence a log monitor's matches carry (core/evidence.ts). The kernel ring buffer has one writer
 * (the classifier takes out what it quotes); a file has none the agent can check (its config said
 * `trustedWriter: any`); a journal entry passed the trustedWriter its config names. A flag that turned a
 * check off says so instead.
 */
export function lineEvidence(config: LogMonitorConfig, flags: EvidenceFlags): LineEvidence {
  const flagged = flags.trustQuotedText ? quotedClassifier(config.plugin, false) : undefined;
  return new LineEvidence(monitorEvidence(config, flags), flagged);
}

/** What a line from a writer the config does not trust carries on the info event it may still give. */
export function untrustedEvidence(config: LogMonitorConfig): LineEvidence {
  return new LineEvidence({ source: config.source, plugin: config.plugin, trust: 'untrusted-writer' });
}

function monitorEvidence(config: LogMonitorConfig, flags: EvidenceFlags): Evidence {
  const { source, plugin } = config;
  if (plugin === 'kmsg') return { source, plugin, trust: 'kernel' };
  if (plugin === 'filelog' && flags.trustFileWriters) {
    return { source, plugin, trust: 'trusted-by-flag', flag: '--trust-file-writers' };
  }
  if (plugin === 'filelog') return { source, plugin, trust: 'file' };
  if (flags.trustJournalWriters) {
    return { source, plugin, trust: 'trusted-by-flag', flag: '--trust-journal-writers' };
  }
  const policy = config.trustedWriter ?? 'any';
  if (policy === 'any') return { source, plugin, trust: 'any-writer' };
  return { source, plugin, trust: policy === 'system' ? 'system-writer' : 'listed-writer' };
}
