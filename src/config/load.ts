import { closeSync, constants, fstatSync, openSync, readSync, type Stats } from 'node:fs';
import { extname } from 'node:path';
import { type Document, LineCounter, parseDocument } from 'yaml';
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

/**
 * The largest config file read. NPD's biggest shipped config is under 10 KiB; a 2M-entry skip list
 * (32 MB) took 1.2 GB to parse. Checked before reading, so an oversized file costs nothing.
 */
export const MAX_CONFIG_BYTES = 4 * 1024 * 1024;

/**
 * Aliases a YAML config may resolve, weighted by the size of what they point at (the yaml package's
 * maxAliasCount). Real configs use none; a "billion laughs" document fails here instead of expanding.
 */
export const MAX_YAML_ALIASES = 100;

/** A refused read of a config file. */
export class ConfigReadError extends Error {
  readonly code: string;

  constructor(code: string, message: string) {
    super(message);
    this.name = 'ConfigReadError';
    this.code = code;
  }
}

/**
 * Reads a config file without ever blocking on it: opened non-blocking so a FIFO cannot hang the
 * open, then refused unless fstat (of the file the path resolves to, symlinks followed) shows a
 * regular file no larger than MAX_CONFIG_BYTES. A file that grows between fstat and read is refused too.
 */
export function readConfigFile(file: string): string {
  const fd = openSync(file, constants.O_RDONLY | constants.O_NONBLOCK | constants.O_NOCTTY);
  try {
    const stat = fstatSync(fd);
    if (!stat.isFile()) throw new ConfigReadError('ENOTREG', `not a regular file (${fileType(stat)})`);
    if (stat.size > MAX_CONFIG_BYTES) throw tooBig(stat.size);
    const bytes = readBounded(fd, stat.size + 1);
    if (bytes.length > MAX_CONFIG_BYTES) throw tooBig(bytes.length);
    return bytes.toString('utf8');
  } finally {
    closeSync(fd);
  }
}

/** Reads to EOF, growing the buffer when the file grew since fstat, but never past the limit + 1. */
function readBounded(fd: number, sizeHint: number): Buffer {
  let buf = Buffer.alloc(Math.min(sizeHint, MAX_CONFIG_BYTES + 1));
  let len = 0;
  for (;;) {
    if (len === buf.length) {
      if (len > MAX_CONFIG_BYTES) return buf;
      const bigger = Buffer.alloc(Math.min(len * 2 + 1, MAX_CONFIG_BYTES + 1));
      buf.copy(bigger);
      buf = bigger;
    }
    const n = readSync(fd, buf, len, buf.length - len, len);
    if (n === 0) return buf.subarray(0, len);
    len += n;
  }
}

function tooBig(size: number): ConfigReadError {
  const limit = `${MAX_CONFIG_BYTES} bytes (${MAX_CONFIG_BYTES / 1024 / 1024} MiB)`;
  return new ConfigReadError('ETOOBIG', `the file is ${size} bytes; the limit is ${limit}`);
}

function fileType(stat: Stats): string {
  if (stat.isDirectory()) return 'directory';
  if (stat.isFIFO()) return 'FIFO';
  if (stat.isCharacterDevice()) return 'character device';
  if (stat.isBlockDevice()) return 'block device';
  if (stat.isSocket()) return 'socket';
  return 'special file';
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
  read: (file: string) => string = readConfigFile,
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
    return toJS(file, doc);
  }
  try {
    return { value: JSON.parse(text) as unknown, issues: [] };
  } catch (err) {
    return { issues: [{ file, path: '', message: `invalid JSON: ${(err as Error).message}` }] };
  }
}

function toJS(file: string, doc: Document.Parsed): { value?: unknown; issues: ConfigIssue[] } {
  try {
    return { value: doc.toJS({ maxAliasCount: MAX_YAML_ALIASES }), issues: [] };
  } catch (err) {
    // The yaml package throws a ReferenceError when aliases expand past maxAliasCount.
    const message = `YAML aliases expand too far (limit ${MAX_YAML_ALIASES}): ${(err as Error).message}`;
    return { issues: [{ file, path: '', message }] };
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
