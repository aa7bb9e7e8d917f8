import { readFileSync } from 'node:fs';
import { SUBSYSTEM_DEFAULTS } from '../conditions/subsystem.ts';
import { SubsystemTable } from '../conditions/subsystem-table.ts';
import { ConfigError } from '../config/errors.ts';
import { parseFlags } from '../config/flag-parser.ts';
import { type LoadedConfig, loadConfigs } from '../config/load.ts';
import type { CommandIo } from '../core/types.ts';
import { parseGoDuration } from '../gocompat/duration.ts';
import { systemLogConfigKind } from '../monitors/system-log/schema.ts';
import type { LogMonitorConfig } from '../rules/config.ts';
import { parseReplayInput, type ReplayFormat } from './parse-input.ts';
import { replay } from './replay.ts';

const USAGE =
  'usage: node-problem-detector replay --config FILE [--config FILE...] [--format kmsg|plain|journal-json] [--boot-time RFC3339|EPOCH_MS] [--subsystem-conditions [--subsystem-window DURATION] [--subsystem-hold DURATION]] LOG|-';

interface Request {
  readonly files: readonly string[];
  readonly format: ReplayFormat;
  readonly bootTime: number;
  readonly input: string;
  /** With --subsystem-conditions: the window and hold, in milliseconds. */
  readonly subsystems: { readonly windowMs: number; readonly holdMs: number } | undefined;
}

/** `replay`: run rules over a recorded log and print events and condition changes as JSON lines. */
export function runReplay(argv: readonly string[], io: CommandIo): number {
  const { request, errors } = parseRequest(argv);
  if (!request) {
    io.stderr(`${errors.join('\n')}\n${USAGE}\n`);
    return 2;
  }
  return execute(request, io);
}

function parseRequest(argv: readonly string[]): { request?: Request; errors: string[] } {
  const flags = parseFlags(argv, [
    { name: 'config', kind: 'list', help: 'monitor config' },
    { name: 'format', kind: 'string', help: 'input format' },
    { name: 'boot-time', kind: 'string', help: 'boot time of kmsg records' },
    { name: 'subsystem-conditions', kind: 'bool', help: 'also print the subsystem conditions' },
    { name: 'subsystem-window', kind: 'duration', help: 'how long an event holds its subsystem' },
    { name: 'subsystem-hold', kind: 'duration', help: 'minimum hold of a False subsystem condition' },
  ]);
  const get = (name: string) => flags.values.get(name) as string | undefined;
  const configs = flags.values.get('config');
  const format = get('format') ?? 'kmsg';
  const bootTime = parseBootTime(get('boot-time') ?? '0');
  const errors = [...flags.errors];
  if (!Array.isArray(configs) || configs.length === 0) errors.push('at least one --config is required');
  if (!['kmsg', 'plain', 'journal-json'].includes(format)) errors.push(`unknown --format "${format}"`);
  if (bootTime === undefined) errors.push('--boot-time must be RFC 3339 or epoch milliseconds');
  if (flags.positional.length !== 1) errors.push('exactly one log file (or -) is required');
  const windowMs = duration('subsystem-window', get('subsystem-window') ?? SUBSYSTEM_DEFAULTS.window, errors);
  const holdMs = duration('subsystem-hold', get('subsystem-hold') ?? SUBSYSTEM_DEFAULTS.hold, errors);
  if (windowMs === 0) errors.push('--subsystem-window must be greater than 0');
  if (errors.length > 0) return { errors };
  const subsystems = get('subsystem-conditions') === 'true' ? { windowMs, holdMs } : undefined;
  const request: Request = {
    files: configs as string[],
    format: format as ReplayFormat,
    bootTime: bootTime as number,
    input: flags.positional[0] as string,
    subsystems,
  };
  return { request, errors };
}

function duration(flag: string, text: string, errors: string[]): number {
  const ms = parseGoDuration(text);
  if (ms instanceof Error || ms < 0) {
    errors.push(`--${flag}: invalid duration "${text}"`);
    return 0;
  }
  return ms;
}

function execute(request: Request, io: CommandIo): number {
  let loaded: LoadedConfig[];
  try {
    loaded = loadConfigs(
      request.files.map((file) => ({ file })),
      [systemLogConfigKind],
    );
  } catch (err) {
    if (!(err instanceof ConfigError)) throw err;
    io.stderr(`${err.message}\n`);
    return 2;
  }
  const configs = loaded.map((l) => l.config as LogMonitorConfig);
  const subsystems = request.subsystems && { ...request.subsystems, table: SubsystemTable.from(loaded) };
  const { input, format, bootTime } = request;
  const text = input === '-' ? io.readStdin() : readFileSync(input, 'utf8');
  const parsed = parseReplayInput(text, format, bootTime);
  for (const m of parsed.malformed) io.stderr(`skipped malformed record: ${m}\n`);
  for (const record of replay(configs, parsed.lines, bootTime, subsystems))
    io.stdout(`${JSON.stringify(record)}\n`);
  return 0;
}

function parseBootTime(text: string): number | undefined {
  if (/^\d+$/.test(text)) return Number(text);
  const ms = Date.parse(text);
  return Number.isNaN(ms) ? undefined : ms;
}
