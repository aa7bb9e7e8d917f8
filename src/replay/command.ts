import { readFileSync } from 'node:fs';
import { ConfigError } from '../config/errors.ts';
import { parseFlags } from '../config/flag-parser.ts';
import { loadConfigs } from '../config/load.ts';
import { systemLogConfigKind } from '../monitors/system-log/schema.ts';
import type { LogMonitorConfig } from '../rules/config.ts';
import { parseReplayInput, type ReplayFormat } from './parse-input.ts';
import { replay } from './replay.ts';

export interface ReplayIo {
  readonly stdout: (text: string) => void;
  readonly stderr: (text: string) => void;
  readonly readStdin: () => string;
}

const USAGE =
  'usage: node-problem-detector replay --config FILE [--config FILE...] [--format kmsg|plain|journal-json] [--boot-time RFC3339|EPOCH_MS] LOG|-';

/** `replay`: run rules over a recorded log and print events and condition changes as JSON lines. */
export function runReplay(argv: readonly string[], io: ReplayIo): number {
  const flags = parseFlags(argv, [
    { name: 'config', kind: 'list', help: 'monitor config' },
    { name: 'format', kind: 'string', help: 'input format' },
    { name: 'boot-time', kind: 'string', help: 'boot time of kmsg records' },
  ]);
  const configs = flags.values.get('config');
  const format = (flags.values.get('format') as string | undefined) ?? 'kmsg';
  const bootTime = parseBootTime((flags.values.get('boot-time') as string | undefined) ?? '0');
  const errors = [...flags.errors];
  if (!Array.isArray(configs) || configs.length === 0) errors.push('at least one --config is required');
  if (!['kmsg', 'plain', 'journal-json'].includes(format)) errors.push(`unknown --format "${format}"`);
  if (bootTime === undefined) errors.push('--boot-time must be RFC 3339 or epoch milliseconds');
  if (flags.positional.length !== 1) errors.push('exactly one log file (or -) is required');
  if (errors.length > 0) {
    io.stderr(`${errors.join('\n')}\n${USAGE}\n`);
    return 2;
  }
  return execute(
    configs as string[],
    format as ReplayFormat,
    bootTime as number,
    flags.positional[0] as string,
    io,
  );
}

function execute(
  files: string[],
  format: ReplayFormat,
  bootTime: number,
  input: string,
  io: ReplayIo,
): number {
  let configs: LogMonitorConfig[];
  try {
    configs = loadConfigs(
      files.map((file) => ({ file })),
      [systemLogConfigKind],
    ).map((l) => l.config as LogMonitorConfig);
  } catch (err) {
    if (!(err instanceof ConfigError)) throw err;
    io.stderr(`${err.message}\n`);
    return 2;
  }
  const text = input === '-' ? io.readStdin() : readFileSync(input, 'utf8');
  const parsed = parseReplayInput(text, format, bootTime);
  for (const m of parsed.malformed) io.stderr(`skipped malformed record: ${m}\n`);
  for (const record of replay(configs, parsed.lines, bootTime)) io.stdout(`${JSON.stringify(record)}\n`);
  return 0;
}

function parseBootTime(text: string): number | undefined {
  if (/^\d+$/.test(text)) return Number(text);
  const ms = Date.parse(text);
  return Number.isNaN(ms) ? undefined : ms;
}
