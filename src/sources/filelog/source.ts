import { createHash } from 'node:crypto';
import { join, relative } from 'node:path';
import type { Logger } from '../../core/logger.ts';
import { counter } from '../../core/metrics.ts';
import { SampledWarning } from '../../core/sampled-warning.ts';
import type { LogLine, MonitorHealth } from '../../core/types.ts';
import type { WallZone } from '../../gocompat/time.ts';
import type { SplitLine } from '../lines.ts';
import { type LogSourceMetrics, logSourceMetrics, sourceCounter } from '../metrics.ts';
import type { LogSource, LogSourceConfig, SourceDeps } from '../source.ts';
import { sourceStartTime } from '../start.ts';
import type { TextFileReader } from '../start-time.ts';
import { FileTail, type TailEvent } from './tail.ts';
import { nodeTailFs, type TailFs, type WatchFn } from './tail-fs.ts';
import { compileTranslator, type FileLineTranslator } from './translator.ts';

export interface FilelogSourceOptions {
  readonly fs?: TailFs;
  /** null: poll only. */
  readonly watch?: WatchFn | null;
  /** Reads /proc/uptime for the start position. */
  readonly uptimeFs?: TextFileReader;
  /** The zone for layouts without one; default the process's local zone, as NPD uses time.Local. */
  readonly zone?: WallZone;
  readonly pollIntervalMs?: number;
  readonly rotateGraceMs?: number;
}

/**
 * NPD's filelog plugin: follows `logPath` (below the host root), parses each line with the
 * timestamp/message regexes and the Go layout, and drops lines older than the start time. Throws for
 * a config that can never work (missing logPath, invalid regex or layout); everything at run time
 * degrades health instead.
 */
export function createFilelogSource(
  config: LogSourceConfig,
  deps: SourceDeps,
  opts: FilelogSourceOptions = {},
): LogSource {
  if (config.logPath === '') throw new Error(`${config.file}: the filelog plugin needs logPath`);
  const root = deps.paths.root;
  if (relative(root, join(root, config.logPath)).startsWith('..')) {
    throw new Error(`${config.file}: logPath "${config.logPath}" resolves outside the host root ${root}`);
  }
  const translator = compileTranslator(config.pluginConfig, opts.zone);
  if (translator instanceof Error) throw new Error(`${config.file}: ${translator.message}`);
  return new FilelogSource(config, deps, opts, translator);
}

class FilelogSource implements LogSource {
  private readonly config: LogSourceConfig;
  private readonly deps: SourceDeps;
  private readonly opts: FilelogSourceOptions;
  private readonly translator: FileLineTranslator;
  private readonly logger: Logger;
  private readonly metrics: LogSourceMetrics;
  private readonly unparsable: { inc(): void };
  private readonly warning: SampledWarning;
  private tail: FileTail | undefined;
  private deliver: (lines: readonly LogLine[]) => void = () => {};
  private startAt = 0;

  constructor(
    config: LogSourceConfig,
    deps: SourceDeps,
    opts: FilelogSourceOptions,
    translator: FileLineTranslator,
  ) {
    this.config = config;
    this.deps = deps;
    this.opts = opts;
    this.translator = translator;
    this.logger = deps.logger.child({ source: config.source, plugin: 'filelog' });
    this.metrics = logSourceMetrics(deps.registry, config.source);
    this.unparsable = sourceCounter(
      deps.registry,
      config.source,
      'npd_log_lines_unparsable_total',
      'File log lines whose timestamp or message did not match the filelog pluginConfig.',
    );
    this.warning = new SampledWarning(
      () => deps.clock.now(),
      (fields) => this.logger.warn(fields, 'log lines do not match the timestamp/message config'),
    );
  }

  start(onLines: (lines: readonly LogLine[]) => void): void {
    if (this.tail) return;
    this.deliver = onLines;
    this.startAt = sourceStartTime(this.config, this.deps, this.logger, this.opts.uptimeFs);
    const events = this.eventCounter();
    const lost = sourceCounter(
      this.deps.registry,
      this.config.source,
      'npd_log_rotation_lost_bytes_total',
      'Bytes of a followed log file that could no longer be read: truncated away unread, or left in a rotated file closed early.',
    );
    const skipped = sourceCounter(
      this.deps.registry,
      this.config.source,
      'npd_log_files_skipped_total',
      'Followed log files rotated in and out between two looks at the path: found beside it and read, or (when they could not be opened) counted in lost bytes.',
    );
    this.tail = new FileTail({
      path: join(this.deps.paths.root, this.config.logPath),
      clock: this.deps.clock,
      logger: this.logger,
      onLines: (lines) => this.onLines(lines),
      onEvent: (event) => events(event).inc(),
      onLost: (bytes) => lost.inc(bytes),
      onSkipped: () => skipped.inc(),
      fs: this.opts.fs ?? nodeTailFs({ root: this.deps.paths.root }),
      ...(this.opts.watch !== undefined ? { watch: this.opts.watch } : {}),
      ...(this.opts.pollIntervalMs !== undefined ? { pollIntervalMs: this.opts.pollIntervalMs } : {}),
      ...(this.opts.rotateGraceMs !== undefined ? { rotateGraceMs: this.opts.rotateGraceMs } : {}),
    });
    this.tail.start();
  }

  async stop(): Promise<void> {
    this.deliver = () => {};
    this.tail?.stop();
    this.tail = undefined;
  }

  health(): MonitorHealth {
    return this.tail?.health() ?? { up: false, healthy: false, detail: 'not started' };
  }

  private eventCounter(): (event: TailEvent) => { inc(): void } {
    const events = counter(this.deps.registry, {
      name: 'npd_log_file_events_total',
      help: 'Followed log file events: rotations (rename, truncate, delete) and failures, each retried.',
      labelNames: ['source', 'event'],
    });
    return (event) => events.labels({ source: this.config.source, event });
  }

  private onLines(lines: readonly SplitLine[]): void {
    const now = this.deps.clock.now();
    const batch: LogLine[] = [];
    for (const line of lines) {
      this.metrics.read.inc();
      const parsed = line.text === '' ? undefined : this.translator.translate(line.text, now);
      if (parsed === undefined) this.metrics.dropped('empty').inc();
      else if (parsed instanceof Error) this.reject(line.text, parsed);
      else if (parsed.timestamp < this.startAt) this.metrics.dropped('before_start').inc();
      else {
        if (line.truncated) this.metrics.truncated.inc();
        batch.push(parsed);
      }
    }
    if (batch.length === 0) return;
    try {
      this.deliver(batch);
    } catch (err) {
      this.metrics.dropped('callback_error').inc(batch.length);
      this.logger.error({ err, lines: batch.length }, 'file log line consumer threw');
    }
  }

  /** The line itself stays out of the agent's log: it may come from a file its reader may not see. */
  private reject(text: string, err: Error): void {
    this.unparsable.inc();
    this.warning.note(() => ({
      reason: err.message,
      lineBytes: Buffer.byteLength(text),
      lineSha256: createHash('sha256').update(text).digest('hex').slice(0, 16),
    }));
  }
}
