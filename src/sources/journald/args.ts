import { join } from 'node:path';

export interface JournalArgsInput {
  readonly directory: string;
  /** SYSLOG_IDENTIFIER match (NPD's pluginConfig.source). */
  readonly identifier?: string | undefined;
  /** _SYSTEMD_UNIT match. */
  readonly unit?: string | undefined;
  /** Resume strictly after this entry; wins over `sinceMs`. */
  readonly afterCursor?: string | undefined;
  /** Epoch milliseconds of the first entry wanted. */
  readonly sinceMs?: number | undefined;
  /** Fields wanted beside MESSAGE (the writer's trusted fields). */
  readonly fields?: readonly string[] | undefined;
}

/**
 * The flags of every JSON read of a journal directory. `--all`: without it, fields over 4096 bytes
 * come out as null and the message would be lost. `--output=json` still writes __CURSOR,
 * __REALTIME_TIMESTAMP and _BOOT_ID beside the fields named.
 */
export function journalJsonArgs(directory: string, fields: readonly string[] = []): string[] {
  return [
    '--output=json',
    `--output-fields=${['MESSAGE', ...fields].join(',')}`,
    '--all',
    '--no-pager',
    '--quiet',
    `--directory=${directory}`,
  ];
}

/**
 * The journalctl command line of the follower. Flags that matter:
 * - `--merge`: with --follow, journalctl (since v248) implies `--boot` unless merging, and then exits
 *   with "No such boot ID" on a journal without entries of the current boot (e.g. still empty).
 * - `--since` takes whole seconds here; the caller drops the sub-second remainder itself.
 * - Matches on two different fields are ANDed by journalctl.
 */
export function journalctlArgs(input: JournalArgsInput): string[] {
  const args = ['--follow', '--merge', ...journalJsonArgs(input.directory, input.fields)];
  if (input.afterCursor !== undefined) args.push(`--after-cursor=${input.afterCursor}`);
  else if (input.sinceMs !== undefined) args.push(`--since=@${Math.floor(input.sinceMs / 1000)}`);
  for (const m of journalMatches(input)) args.push(`${m.field}=${m.value}`);
  return args;
}

export interface JournalMatch {
  readonly field: 'SYSLOG_IDENTIFIER' | '_SYSTEMD_UNIT';
  readonly value: string;
}

/** The journal field matches for NPD's pluginConfig.source (identifier) and pluginConfig.unit. */
export function journalMatches(input: {
  readonly identifier?: string | undefined;
  readonly unit?: string | undefined;
}): JournalMatch[] {
  const matches: JournalMatch[] = [];
  if (input.identifier) matches.push({ field: 'SYSLOG_IDENTIFIER', value: input.identifier });
  if (input.unit) matches.push({ field: '_SYSTEMD_UNIT', value: input.unit });
  return matches;
}

/**
 * Whether an entry passes the matches as journalctl applies them: matches on different fields are
 * ANDed, and an entry without a matched field does not pass.
 */
export function passesJournalMatches(
  matches: readonly JournalMatch[],
  fields: Readonly<Partial<Record<JournalMatch['field'], string>>>,
): boolean {
  return matches.every((m) => fields[m.field] === m.value);
}

/** The directory operations detection needs, injected for tests. */
export interface DirProbe {
  /** Entry names, or undefined when the path is not a readable directory. */
  list(path: string): readonly string[] | undefined;
}

/** Where journald keeps the journal across reboots (Storage=persistent, or auto with the folder). */
export const PERSISTENT_JOURNAL = '/var/log/journal';
const VOLATILE = '/run/log/journal';

export type JournalDirectory =
  | { readonly path: string; readonly note?: string }
  | { readonly missing: string };

/** Whether `dir` or a machine-id folder in it holds journal files (journalctl -D reads both levels). */
export function holdsJournalFiles(dir: string, probe: DirProbe): boolean {
  const names = probe.list(dir) ?? [];
  const isJournal = (n: string) => n.endsWith('.journal') || n.endsWith('.journal~');
  return names.some((n) => isJournal(n) || (probe.list(join(dir, n)) ?? []).some(isJournal));
}

/**
 * Where journald keeps the journal (NPD #121, #389, #621): persistent storage when it holds anything,
 * else volatile storage, else an empty persistent directory journald may still start filling. An
 * explicit logPath is honoured, except that NPD's stock value "/var/log/journal" falls back to the
 * volatile directory when it does not exist, which is what hosts with Storage=volatile need.
 */
export function detectJournalDirectory(root: string, logPath: string, probe: DirProbe): JournalDirectory {
  const persistent = join(root, PERSISTENT_JOURNAL);
  const volatile = join(root, VOLATILE);
  if (logPath !== '' && logPath.replace(/\/+$/, '') !== PERSISTENT_JOURNAL) {
    const path = join(root, logPath);
    return probe.list(path) ? { path } : { missing: `journal directory ${path} does not exist` };
  }
  const persisted = probe.list(persistent);
  if (persisted && persisted.length > 0) return { path: persistent };
  if (probe.list(volatile)) {
    return {
      path: volatile,
      note: `${persistent} is missing or empty, reading volatile journal ${volatile}`,
    };
  }
  if (persisted) return { path: persistent };
  return { missing: `no journal directory: neither ${persistent} nor ${volatile} exists` };
}
