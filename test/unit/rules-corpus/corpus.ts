/**
 * The labelled rule corpus (test/corpus/*.yaml): real log lines from public sources, each with the
 * outputs the shipped rules must give for it. Cases run through the production replay path: each
 * line is encoded in its source's wire format (a /dev/kmsg record, a `journalctl -o json` entry),
 * parsed by replay's input parser and fed to replay() with engines started on a fake clock.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { parse } from 'yaml';
import { z } from 'zod';
import { loadConfigs } from '../../../src/config/load.ts';
import { FakeClock } from '../../../src/core/clock.ts';
import { systemLogConfigKind } from '../../../src/monitors/system-log/schema.ts';
import { parseReplayInput } from '../../../src/replay/parse-input.ts';
import { type ReplayRecord, replay } from '../../../src/replay/replay.ts';
import type { LogMonitorConfig, LogRuleConfig } from '../../../src/rules/config.ts';

export const ROOT = join(import.meta.dirname, '..', '..', '..');
export const CORPUS_DIR = join(ROOT, 'test', 'corpus');

const expectOne = z.union([
  z.strictObject({ kind: z.literal('event'), reason: z.string().min(1) }),
  z.strictObject({ kind: z.literal('condition'), type: z.string().min(1), reason: z.string().min(1) }),
]);

const caseSchema = z.strictObject({
  text: z.string().min(1),
  /** Where the wording comes from: kernel/daemon source path and function, and a URL where it was seen. */
  source: z.string().min(10),
  /** `none` for a benign look-alike; otherwise every output the line must give, and no other. */
  expect: z.union([z.literal('none'), expectOne, z.array(expectOne).min(1)]),
  /** For a look-alike: the reason(s) of the rules whose words it shares. */
  near: z.union([z.string().min(1), z.array(z.string().min(1)).min(1)]).optional(),
  /** Feed the line this many times, one second apart (frequency rules); expect is for the last. */
  repeat: z.number().int().min(1).max(100).optional(),
  SYSLOG_IDENTIFIER: z.string().optional(),
  _SYSTEMD_UNIT: z.string().optional(),
});

const fileSchema = z.strictObject({
  config: z.union([z.string().min(1), z.array(z.string().min(1)).min(1)]),
  /**
   * kmsg-text: the message as the kmsg monitor sees it after parsing (encoded back into a record);
   * kmsg-record: the text part of a record exactly as /dev/kmsg delivers it (\xNN escapes included);
   * journal: MESSAGE with optional SYSLOG_IDENTIFIER and _SYSTEMD_UNIT (file-wide defaults allowed).
   */
  format: z.enum(['kmsg-text', 'kmsg-record', 'journal']),
  SYSLOG_IDENTIFIER: z.string().optional(),
  _SYSTEMD_UNIT: z.string().optional(),
  cases: z.array(caseSchema).min(1),
});

export type CorpusCase = z.infer<typeof caseSchema>;
export type CorpusFile = z.infer<typeof fileSchema> & { readonly name: string; readonly configs: string[] };
export type Expected = z.infer<typeof expectOne>;

export function loadCorpus(): CorpusFile[] {
  return readdirSync(CORPUS_DIR)
    .filter((f) => f.endsWith('.yaml'))
    .sort()
    .map((name) => {
      const parsed = fileSchema.safeParse(parse(readFileSync(join(CORPUS_DIR, name), 'utf8')));
      if (!parsed.success) throw new Error(`test/corpus/${name}: ${z.prettifyError(parsed.error)}`);
      const c = parsed.data.config;
      return { ...parsed.data, name, configs: Array.isArray(c) ? c : [c] };
    });
}

const configCache = new Map<string, LogMonitorConfig>();

export function loadRuleFile(path: string): LogMonitorConfig {
  let config = configCache.get(path);
  if (!config) {
    const [loaded] = loadConfigs([{ file: join(ROOT, path) }], [systemLogConfigKind]);
    if (!loaded) throw new Error(`${path}: not loaded`);
    config = loaded.config as LogMonitorConfig;
    configCache.set(path, config);
  }
  return config;
}

export function nearList(c: CorpusCase): string[] {
  if (c.near === undefined) return [];
  return Array.isArray(c.near) ? c.near : [c.near];
}

export function expectedList(c: CorpusCase): Expected[] {
  if (c.expect === 'none') return [];
  return Array.isArray(c.expect) ? c.expect : [c.expect];
}

/** The kernel's msg_add_ext_text() (kernel/printk/printk.c): `\`, controls and bytes >= 127 as \xNN. */
export function kmsgEscape(text: string): string {
  let out = '';
  for (const byte of Buffer.from(text, 'utf8')) {
    if (byte < 0x20 || byte >= 0x7f || byte === 0x5c) out += `\\x${byte.toString(16).padStart(2, '0')}`;
    else out += String.fromCharCode(byte);
  }
  return out;
}

function wireInput(file: CorpusFile, c: CorpusCase, repeat: number, startMs: number): string {
  const rows: string[] = [];
  for (let i = 0; i < repeat; i++) {
    const usec = (i + 1) * 1_000_000;
    if (file.format === 'journal') {
      const entry: Record<string, string> = {
        MESSAGE: c.text,
        __REALTIME_TIMESTAMP: String((startMs + (i + 1) * 1000) * 1000),
      };
      const ident = c.SYSLOG_IDENTIFIER ?? file.SYSLOG_IDENTIFIER;
      const unit = c._SYSTEMD_UNIT ?? file._SYSTEMD_UNIT;
      if (ident !== undefined) entry.SYSLOG_IDENTIFIER = ident;
      if (unit !== undefined) entry._SYSTEMD_UNIT = unit;
      rows.push(JSON.stringify(entry));
    } else {
      const body = file.format === 'kmsg-text' ? kmsgEscape(c.text) : c.text;
      rows.push(`3,${i + 1},${usec},-;${body}`);
    }
  }
  return `${rows.join('\n')}\n`;
}

/** Replays one case with fresh engines; returns the records of the last repetition only. */
export function runCase(
  file: CorpusFile,
  c: CorpusCase,
  configs: readonly LogMonitorConfig[],
): ReplayRecord[] {
  const clock = new FakeClock();
  const startMs = clock.now();
  const repeat = c.repeat ?? 1;
  const format = file.format === 'journal' ? 'journal-json' : 'kmsg';
  const parsed = parseReplayInput(wireInput(file, c, repeat, startMs), format, startMs);
  if (parsed.malformed.length > 0 || parsed.lines.length !== repeat)
    throw new Error(`case did not encode to ${repeat} line(s): ${parsed.malformed.join('; ')}`);
  const last = (parsed.lines.at(-1) as { timestamp: number }).timestamp;
  return replay(configs, parsed.lines, startMs).filter((r) => Date.parse(r.timestamp) >= last);
}

/**
 * Outputs in the corpus's terms: events by reason, conditions by type and reason. A condition turning
 * True also records NPD's "Node condition X is now: True" event; it belongs to the condition and is
 * checked, then folded into it.
 */
export function summarise(records: readonly ReplayRecord[]): string[] {
  const conds = records.filter((r) => r.kind === 'condition');
  const out = conds.map((r) => `condition ${r.type}/${r.reason}${r.status === 'True' ? '' : ` ${r.status}`}`);
  const folded = new Set<ReplayRecord>();
  for (const c of conds) {
    const prefix = `Node condition ${c.type} is now: ${c.status},`;
    const own = records.find(
      (r) => r.kind === 'event' && r.reason === c.reason && r.message.startsWith(prefix),
    );
    if (own) folded.add(own);
    else out.push(`condition ${c.type}/${c.reason} without its change event`);
  }
  for (const r of records) if (r.kind === 'event' && !folded.has(r)) out.push(`event ${r.reason}`);
  return out.sort();
}

export function expectedSummary(c: CorpusCase): string[] {
  return expectedList(c)
    .map((e) => (e.kind === 'event' ? `event ${e.reason}` : `condition ${e.type}/${e.reason}`))
    .sort();
}

/** The config with just one of its rules, to prove that rule itself matches some corpus line. */
export function onlyRule(config: LogMonitorConfig, rule: LogRuleConfig): LogMonitorConfig {
  return { ...config, rules: [rule] };
}

export function ruleKey(rule: LogRuleConfig): string {
  return rule.type === 'permanent' ? `condition ${rule.condition}/${rule.reason}` : `event ${rule.reason}`;
}
