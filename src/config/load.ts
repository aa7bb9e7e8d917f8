import { readFileSync } from 'node:fs';
import { extname } from 'node:path';
import { LineCounter, parseDocument } from 'yaml';
import { ConfigError, type ConfigIssue } from './errors.ts';
import { isRecord } from './schema-kit.ts';

/** A kind of monitor config, keyed by the `plugin` values it accepts. */
export interface ConfigKind<C = unknown> {
  /** NPD's name for the monitor type, as in --config.<kind>. */
  readonly kind: string;
  readonly plugins: readonly string[];
  /** Configs without a `plugin` field (NPD's system-stats) are recognised by this instead. */
  readonly matchesWithoutPlugin?: (raw: Record<string, unknown>) => boolean;
  validate(raw: unknown, file: string): { config?: C; issues: ConfigIssue[] };
}

export interface LoadedConfig<C = unknown> {
  readonly kind: string;
  readonly file: string;
  readonly config: C;
}

/**
 * Loads and validates config files. JSON (NPD's format) and YAML (ours) share one schema. Every issue
 * in every file is collected before failing, so a user fixes them all in one round.
 */
export function loadConfigs(
  files: readonly { file: string; kind?: string }[],
  kinds: readonly ConfigKind[],
  read: (file: string) => string = (f) => readFileSync(f, 'utf8'),
): LoadedConfig[] {
  const issues: ConfigIssue[] = [];
  const loaded: LoadedConfig[] = [];
  for (const { file, kind } of files) {
    const result = loadOne(file, kind, kinds, read);
    issues.push(...result.issues);
    if (result.loaded) loaded.push(result.loaded);
  }
  if (issues.length > 0) throw new ConfigError(issues);
  return loaded;
}

function loadOne(
  file: string,
  expected: string | undefined,
  kinds: readonly ConfigKind[],
  read: (file: string) => string,
): { loaded?: LoadedConfig; issues: ConfigIssue[] } {
  let text: string;
  try {
    text = read(file);
  } catch (err) {
    return { issues: [{ file, path: '', message: `cannot read: ${(err as Error).message}` }] };
  }
  const parsed = parseText(file, text);
  if (parsed.issues.length > 0) return { issues: parsed.issues };
  const kind = pickKind(parsed.value, kinds);
  if (!kind) return { issues: [unknownPlugin(file, parsed.value, kinds)] };
  if (expected && kind.kind !== expected) {
    const message = `this is a ${kind.kind} config; pass it with --config.${kind.kind}`;
    return { issues: [{ file, path: 'plugin', message }] };
  }
  const { config, issues } = kind.validate(parsed.value, file);
  if (issues.length > 0 || config === undefined) return { issues };
  return { loaded: { kind: kind.kind, file, config }, issues: [] };
}

export function parseText(file: string, text: string): { value?: unknown; issues: ConfigIssue[] } {
  const ext = extname(file).toLowerCase();
  if (ext === '.yaml' || ext === '.yml') {
    const lineCounter = new LineCounter();
    const doc = parseDocument(text, { lineCounter, uniqueKeys: true, prettyErrors: false });
    if (doc.errors.length > 0) {
      return {
        issues: doc.errors.map((e) => {
          const pos = lineCounter.linePos(e.pos[0]);
          return {
            file,
            path: `line ${pos.line}:${pos.col}`,
            message: e.message.split('\n')[0] ?? e.message,
          };
        }),
      };
    }
    return { value: doc.toJS({ maxAliasCount: 100 }), issues: [] };
  }
  try {
    return { value: JSON.parse(text) as unknown, issues: [] };
  } catch (err) {
    return { issues: [{ file, path: '', message: `invalid JSON: ${(err as Error).message}` }] };
  }
}

function pickKind(raw: unknown, kinds: readonly ConfigKind[]): ConfigKind | undefined {
  if (!isRecord(raw)) return undefined;
  if (typeof raw.plugin === 'string') return kinds.find((k) => k.plugins.includes(raw.plugin as string));
  return kinds.find((k) => k.matchesWithoutPlugin?.(raw));
}

function unknownPlugin(file: string, raw: unknown, kinds: readonly ConfigKind[]): ConfigIssue {
  if (!isRecord(raw)) return { file, path: '', message: 'expected an object at the top level' };
  const known = kinds.flatMap((k) => k.plugins).join(', ');
  if (raw.plugin === undefined) return { file, path: 'plugin', message: `required; one of: ${known}` };
  return { file, path: 'plugin', message: `unknown plugin ${JSON.stringify(raw.plugin)}; one of: ${known}` };
}
