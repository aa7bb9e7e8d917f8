import { extname } from 'node:path';
import type { ConfigIssue } from '../../config/errors.ts';
import { isRecord } from '../../config/schema-kit.ts';
import type { Logger } from '../../core/logger.ts';
import type { LogMonitorConfig } from '../../rules/config.ts';
import { infoOnly } from './untrusted.ts';

/**
 * Why a log file's lines are no evidence (docs/rules.md, "Who wrote a log file line"): a syslog file
 * records no writer. rsyslog writes what `logger` sends, as any user, to /var/log/syslog and
 * /var/log/messages, and kern.log holds the kernel's reports with the process and file names any
 * program chooses, which nothing tells apart in a file (docs/rules.md, "Who wrote the text").
 */
export const ANY_FILE_WRITER =
  'a log file records no writer; any process that can log may have written the line';

/**
 * Whether every line of this config comes from a writer it cannot name: a filelog config unless it
 * trusts any writer (`trustedWriter: any`, or --trust-file-writers). Such lines may fire only the
 * rules an unknown writer may (untrusted.ts's infoOnly), as a journal entry from an untrusted writer.
 */
export function anyFileWriter(config: LogMonitorConfig): boolean {
  return config.plugin === 'filelog' && config.trustedWriter !== 'any';
}

/**
 * The loader's refusal: a filelog config in this agent's YAML whose rule asks for more than an info
 * event (a condition, a frequency count, impact warning or fatal) without `trustedWriter: any`. NPD's
 * JSON configs load (NPD compatibility); their matches count in npd_log_lines_untrusted_total and the
 * monitor warns at start-up (warnUntrustedFile).
 */
export function fileEvidenceIssues(raw: Record<string, unknown>, file: string): ConfigIssue[] {
  if (raw.plugin !== 'filelog' || raw.trustedWriter === 'any' || isNpdJson(file)) return [];
  const rules = Array.isArray(raw.rules) ? raw.rules : [];
  const issues: ConfigIssue[] = [];
  rules.forEach((r, i) => {
    const asks = isRecord(r) ? asksForMore(r, raw.impact) : undefined;
    if (asks === undefined || !isRecord(r)) return;
    const reason = typeof r.reason === 'string' ? ` ${r.reason}` : '';
    const message =
      `rule${reason} ${asks}, but a log file records no writer (any user's logger line reaches it): ` +
      'make it a temporary rule with impact: info, or set trustedWriter: any on the file to take ' +
      "every writer's line as evidence";
    issues.push({ file, path: `rules[${i}]`, message });
  });
  return issues;
}

/** What a raw rule asks for beyond an info event, or undefined when it asks for nothing more. */
function asksForMore(r: Record<string, unknown>, fileImpact: unknown): string | undefined {
  if (r.type === 'permanent') return `raises condition ${String(r.condition)}`;
  if (r.count !== undefined) return 'counts lines towards a frequency window';
  const impact = r.impact ?? fileImpact ?? 'warning';
  return impact === 'info' ? undefined : `has impact ${String(impact)}`;
}

/** NPD's format: the loader reads every file that is not YAML as JSON (config/load.ts parseText). */
function isNpdJson(file: string): boolean {
  const ext = extname(file).toLowerCase();
  return ext !== '.yaml' && ext !== '.yml';
}

/**
 * Says at start-up (and at a reload) which rules of an NPD filelog config raise nothing: their
 * matches only count, so an operator who relied on them learns it from the log, not from a repair
 * that never came.
 */
export function warnUntrustedFile(config: LogMonitorConfig, logger: Logger | undefined): void {
  if (!anyFileWriter(config)) return;
  const refused = config.rules.filter((r) => !infoOnly(r, config)).map((r) => r.reason);
  if (refused.length === 0) return;
  logger?.warn(
    { file: config.file, source: config.source, rules: [...new Set(refused)] },
    `these filelog rules raise nothing (no condition, no Warning event): ${ANY_FILE_WRITER}; ` +
      'their matches count in npd_log_lines_untrusted_total. trustedWriter: any in the file or ' +
      '--trust-file-writers restores NPD behaviour',
  );
}
