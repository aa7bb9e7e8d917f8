import type * as ChildProcess from 'node:child_process';
import * as nodeFs from 'node:fs';
import { builtin } from '../../core/builtin.ts';
import type { TimerHandle } from '../../core/clock.ts';
import type { Logger } from '../../core/logger.ts';
import { SampledWarning } from '../../core/sampled-warning.ts';
import type { LogLine, MonitorHealth } from '../../core/types.ts';
import type { SplitLine } from '../lines.ts';
import { type LogSourceMetrics, linesMalformed, logSourceMetrics, sourceCounter } from '../metrics.ts';
import type { LogSource, LogSourceConfig, SourceDeps } from '../source.ts';
import { sourceStartTime } from '../start.ts';
import type { TextFileReader } from '../start-time.ts';
import {
  type DirProbe,
  detectJournalDirectory,
  holdsJournalFiles,
  type JournalDirectory,
  journalctlArgs,
} from './args.ts';
import { journalEntryOf, parseJournalRecord } from './entry.ts';
import { JournalFollower, type SpawnFn } from './follower.ts';
import { journalWriter, trustFields, untrustedWriter } from './trust.ts';

export interface JournaldSourceOptions {
  /** The journalctl binary. */
  readonly command?: string;
  readonly spawn?: SpawnFn;
  readonly probe?: DirProbe;
  /** Reads /proc/uptime for the start position. */
  readonly fs?: TextFileReader;
  readonly env?: NodeJS.ProcessEnv;
  readonly killTimeoutMs?: number;
  /** How often the journal directory is detected again, to follow journald's move from /run to /var. */
  readonly recheckMs?: number;
}

/** With --all a record carries its whole message; bigger JSON lines are dropped (counted), not buffered. */
const MAX_JSON_LINE_BYTES = 1024 * 1024;
const DEFAULT_KILL_TIMEOUT_MS = 3000;
const DEFAULT_RECHECK_MS = 60_000;

export function nodeDirProbe(): DirProbe {
  return {
    list(path) {
      try {
        return nodeFs.readdirSync(path);
      } catch {
        return undefined;
      }
    },
  };
}

/**
 * The systemd journal through a `journalctl --follow --output=json` child. The first run starts at NPD's
 * start time; every later run resumes after the cursor of the last entry read, so a journalctl restart
 * neither loses nor repeats entries.
 */
export function createJournaldSource(
  config: LogSourceConfig,
  deps: SourceDeps,
  opts: JournaldSourceOptions = {},
): LogSource {
  return new JournaldSource(config, deps, opts);
}

class JournaldSource implements LogSource {
  private readonly config: LogSourceConfig;
  private readonly deps: SourceDeps;
  private readonly opts: JournaldSourceOptions;
  private readonly probe: DirProbe;
  private readonly logger: Logger;
  private readonly metrics: LogSourceMetrics;
  private readonly malformed: { inc(): void };
  private readonly restarts: { inc(): void };
  private readonly badLines: SampledWarning;
  private follower: JournalFollower | undefined;
  private deliver: (lines: readonly LogLine[]) => void = () => {};
  private recheck: TimerHandle | undefined;
  private directory: string | undefined;
  /** Why there is no journal to read here (no directory, or no files in it), while that holds. */
  private absent: string | undefined;
  private cursor: string | undefined;
  private startAt = 0;
  /** Until an entry at or after startAt arrives, --since's whole-second rounding is corrected here. */
  private backlog = true;

  constructor(config: LogSourceConfig, deps: SourceDeps, opts: JournaldSourceOptions) {
    this.config = config;
    this.deps = deps;
    this.opts = opts;
    this.probe = opts.probe ?? nodeDirProbe();
    this.logger = deps.logger.child({ source: config.source, plugin: 'journald' });
    this.metrics = logSourceMetrics(deps.registry, config.source);
    this.malformed = linesMalformed(deps.registry, config.source);
    this.restarts = sourceCounter(
      deps.registry,
      config.source,
      'npd_journal_restarts_total',
      'Times journalctl was restarted, or its start retried, after an exit, a spawn failure or a missing journal.',
    );
    this.badLines = new SampledWarning(
      () => deps.clock.now(),
      (fields) => this.logger.warn(fields, 'malformed journalctl output lines'),
    );
  }

  start(onLines: (lines: readonly LogLine[]) => void): void {
    if (this.follower) return;
    this.deliver = onLines;
    this.startAt = sourceStartTime(this.config, this.deps, this.logger, this.opts.fs);
    this.follower = new JournalFollower({
      clock: this.deps.clock,
      logger: this.logger,
      spawn:
        this.opts.spawn ??
        ((command, args, options) =>
          builtin<typeof ChildProcess>('node:child_process').spawn(command, args, options)),
      command: this.opts.command ?? 'journalctl',
      env: { ...(this.opts.env ?? process.env), SYSTEMD_COLORS: '0', SYSTEMD_PAGER: '' },
      args: () => this.nextArgs(),
      onLines: (lines) => this.onLines(lines),
      onRestart: () => this.restarts.inc(),
      maxLineBytes: MAX_JSON_LINE_BYTES,
      killTimeoutMs: this.opts.killTimeoutMs ?? DEFAULT_KILL_TIMEOUT_MS,
    });
    this.follower.start();
    this.scheduleRecheck();
  }

  async stop(): Promise<void> {
    this.deliver = () => {};
    this.recheck?.cancel();
    this.recheck = undefined;
    const follower = this.follower;
    this.follower = undefined;
    await follower?.stop();
  }

  health(): MonitorHealth {
    const h = this.follower?.health() ?? { up: false, healthy: false, detail: 'not started' };
    if (!this.follower || this.absent === undefined) return h;
    return { up: true, healthy: false, waiting: true, detail: this.absent };
  }

  /** Notes whether the node has a journal at all; a journalctl on an empty folder waits silently. */
  private noteAbsent(found: JournalDirectory): void {
    const next =
      'missing' in found
        ? found.missing
        : holdsJournalFiles(found.path, this.probe)
          ? undefined
          : `no journal files in ${found.path}: systemd-journald is not running or writes elsewhere`;
    if (next !== this.absent) {
      if (next) this.logger.warn({ reason: next }, 'no journal to read; waiting for one');
      else if (this.absent) this.logger.info('journal files found; reading them');
    }
    this.absent = next;
  }

  /** Finds the journal directory, and notes whether there is a journal to read at all. */
  private locate() {
    const found = detectJournalDirectory(this.deps.paths.root, this.config.logPath, this.probe);
    this.noteAbsent(found);
    return found;
  }

  private nextArgs(): readonly string[] | string {
    const found = this.locate();
    if ('missing' in found) {
      this.directory = undefined;
      return found.missing;
    }
    if (found.note && found.path !== this.directory) this.logger.info({ directory: found.path }, found.note);
    this.directory = found.path;
    return journalctlArgs({
      directory: found.path,
      identifier: this.config.pluginConfig.source,
      unit: this.config.pluginConfig.unit,
      afterCursor: this.cursor,
      sinceMs: this.startAt,
      fields: trustFields(this.config.trustedWriter ?? 'any'),
    });
  }

  private scheduleRecheck(): void {
    this.recheck = this.deps.clock.setTimeout(() => {
      const found = this.locate();
      if (this.directory !== undefined && 'path' in found && found.path !== this.directory) {
        this.logger.info(
          { from: this.directory, to: found.path },
          'journal directory moved; restarting journalctl',
        );
        this.follower?.recycle();
      }
      if (this.follower) this.scheduleRecheck();
    }, this.opts.recheckMs ?? DEFAULT_RECHECK_MS);
  }

  private onLines(lines: readonly SplitLine[]): void {
    const batch: LogLine[] = [];
    for (const line of lines) this.accept(line, batch);
    if (batch.length === 0) return;
    try {
      this.deliver(batch);
    } catch (err) {
      this.metrics.dropped('callback_error').inc(batch.length);
      this.logger.error({ err, lines: batch.length }, 'journal line consumer threw');
    }
  }

  private accept(line: SplitLine, batch: LogLine[]): void {
    this.metrics.read.inc();
    if (line.truncated) {
      this.metrics.dropped('oversized').inc();
      this.badLines.note(() => ({ reason: `JSON record over ${MAX_JSON_LINE_BYTES} bytes` }));
      return;
    }
    const record = parseJournalRecord(line.text);
    const entry = record instanceof Error ? record : journalEntryOf(record);
    if (record instanceof Error || entry instanceof Error) {
      this.malformed.inc();
      this.badLines.note(() => ({ reason: entry.message, line: line.text.slice(0, 200) }));
      return;
    }
    this.cursor = entry.cursor;
    if (this.backlog && entry.timestamp < this.startAt) {
      this.metrics.dropped('before_start').inc();
      return;
    }
    this.backlog = false;
    if (entry.message === '') {
      this.metrics.dropped('empty').inc();
      return;
    }
    if (entry.truncated) this.metrics.truncated.inc();
    // Marked, not dropped: the monitor decides what an untrusted line may still do, rule by rule.
    const policy = this.config.trustedWriter ?? 'any';
    const untrusted = untrustedWriter(policy, record);
    const { timestamp, message } = entry;
    if (untrusted !== undefined) return void batch.push({ timestamp, message, untrusted });
    // Who wrote it, for the evidence of what it raises (core/evidence.ts).
    const writer = journalWriter(policy, record);
    batch.push(writer === undefined ? { timestamp, message } : { timestamp, message, writer });
  }
}
