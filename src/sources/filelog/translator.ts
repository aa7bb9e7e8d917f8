import RE2 from 're2';
import type { LogLine } from '../../core/types.ts';
import { compileGoLayout, type GoLayout, parseGoTime, type WallZone } from '../../gocompat/time.ts';

/** Turns one file line into a timestamped message, or says why it cannot. */
export interface FileLineTranslator {
  translate(line: string, nowMs: number): LogLine | Error;
}

interface Submatcher {
  readonly source: string;
  /** Go's FindStringSubmatch, last element: the last group ("" if it did not take part), else the match. */
  lastSubmatch(text: string): string | undefined;
}

function submatcher(source: string): Submatcher {
  // Unanchored search, as Go's regexp.FindStringSubmatch; RE2 keeps it linear-time.
  const re = new RE2(source);
  return {
    source,
    lastSubmatch(text) {
      const m = re.exec(text);
      if (!m) return undefined;
      return m[m.length - 1] ?? '';
    },
  };
}

/**
 * NPD's filelog translator: `timestamp` and `message` are regexes whose last submatch is used, and
 * `timestampFormat` is a Go layout. Config mistakes come back as an Error naming the key.
 */
export function compileTranslator(
  pluginConfig: Readonly<Record<string, string>>,
  zone?: WallZone,
): FileLineTranslator | Error {
  const parts: { timestamp?: Submatcher; message?: Submatcher; layout?: GoLayout } = {};
  for (const key of ['timestamp', 'message'] as const) {
    const source = pluginConfig[key] ?? '';
    if (source === '') return new Error(`pluginConfig.${key} is required`);
    try {
      parts[key] = submatcher(source);
    } catch (err) {
      return new Error(`pluginConfig.${key}: invalid RE2 pattern: ${(err as Error).message}`);
    }
  }
  const format = pluginConfig.timestampFormat ?? '';
  if (format === '') return new Error('pluginConfig.timestampFormat is required');
  const layout = compileGoLayout(format);
  if (layout instanceof Error) return new Error(`pluginConfig.timestampFormat: ${layout.message}`);
  const { timestamp, message } = parts as Required<typeof parts>;
  return {
    translate(line, nowMs) {
      const stamp = timestamp.lastSubmatch(line);
      if (stamp === undefined) return new Error(`no timestamp matching /${timestamp.source}/`);
      const at = parseGoTime(layout, stamp, zone ? { nowMs, zone } : { nowMs });
      // Go's parse error quotes the text; the reason is logged, so it names only the layout.
      if (at instanceof Error) return new Error(`timestamp does not parse as "${format}"`);
      const text = message.lastSubmatch(line);
      if (text === undefined) return new Error(`no message matching /${message.source}/`);
      return { timestamp: at, message: text };
    },
  };
}
