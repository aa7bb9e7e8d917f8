import type { Counter, Registry } from 'prom-client';
import type { Logger } from '../../core/logger.ts';
import { SampledWarning } from '../../core/sampled-warning.ts';
import type { LogPlugin } from '../../rules/config.ts';
import type { EngineResult } from '../../rules/log-engine.ts';
import { type QuotedClassifier, untrustedMatches } from '../../rules/untrusted.ts';
import { nestedQuoteSpans } from '../../sources/journald/quoted.ts';
import { kernelQuotedSpans } from '../../sources/kmsg/quoted.ts';

/**
 * Which spans of a plugin's lines are quoted from user space (docs/rules.md, "Who wrote the text"):
 * the kernel's format catalogue for kmsg, containerd's and the kubelet's nested quotes for the journal.
 * A log file has no writer to tell apart; --trust-quoted-text (`trust`) turns the marking off.
 */
export function quotedClassifier(
  plugin: LogPlugin,
  trust: boolean | undefined,
): QuotedClassifier | undefined {
  if (trust) return undefined;
  if (plugin === 'kmsg') return kernelQuotedSpans;
  return plugin === 'journald' ? nestedQuoteSpans : undefined;
}

/**
 * Counts and logs the matches the engine discarded because only text the line's writer quotes from
 * user space matched (a process or file name in a kernel record, a pod's command in a containerd
 * line): npd_log_lines_untrusted_total{source,rule}, and one warning per rule a minute at most.
 */
export class QuotedMatches {
  private readonly source: string;
  private readonly counter: Counter<'source' | 'rule'>;
  private readonly warnings = new Map<string, SampledWarning>();
  private readonly now: () => number;
  private readonly logger: Logger | undefined;

  /** `rules`: the reasons whose series start at 0 (those of a source that marks quoted text). */
  constructor(
    source: string,
    rules: readonly string[],
    deps: { registry: Registry; now: () => number; logger?: Logger | undefined },
  ) {
    this.source = source;
    this.counter = untrustedMatches(deps.registry);
    for (const rule of new Set(rules)) this.counter.inc({ source, rule }, 0);
    this.now = deps.now;
    this.logger = deps.logger;
  }

  note(result: EngineResult): void {
    for (const rule of result.untrusted ?? []) {
      this.counter.inc({ source: this.source, rule });
      this.warningFor(rule).note(() => ({ source: this.source, rule }));
    }
  }

  private warningFor(rule: string): SampledWarning {
    let warning = this.warnings.get(rule);
    if (!warning) {
      warning = new SampledWarning(this.now, (fields) =>
        this.logger?.warn(fields, 'rule matched only text the writer quotes from user space; discarded'),
      );
      this.warnings.set(rule, warning);
    }
    return warning;
  }
}
