import * as fsp from 'node:fs/promises';
import path from 'node:path';
import type { Counter, Registry } from 'prom-client';
import type { Logger } from '../../core/logger.ts';
import { counter } from '../../core/metrics.ts';
import type { KubeEvent } from '../record/types.ts';
import { OutageLog, type SinkMetrics, sinkMetrics } from './metrics.ts';
import { persistedLine } from './record.ts';
import type { PersistSink } from './watcher.ts';

/** The file system calls the sink makes; node:fs/promises by default, injectable for tests. */
export interface FileOps {
  appendFile(file: string, data: string, opts: { readonly mode: number }): Promise<void>;
  stat(file: string): Promise<{ readonly size: number }>;
  rename(from: string, to: string): Promise<void>;
  mkdir(dir: string, opts: { readonly recursive: true }): Promise<unknown>;
  open(file: string, flags: 'r'): Promise<Pick<fsp.FileHandle, 'read' | 'close'>>;
}

export const DEFAULT_FILE_MAX_BYTES = 10 * 1024 * 1024;
/** Lines kept for the next attempt after a failed write; the oldest are given up beyond it. */
export const DEFAULT_FILE_BACKLOG = 1000;
/** Event messages can quote kernel and service logs, which are not world-readable either. */
const FILE_MODE = 0o640;
const NEWLINE = 0x0a;

export interface FileSinkOptions {
  readonly path: string;
  /** The `nodeName` field of every line. */
  readonly nodeName: string;
  readonly registry: Registry;
  readonly logger: Logger;
  /** The file is renamed to `<path>.1` (replacing it) before a write would take it past this size. */
  readonly maxBytes?: number;
  readonly maxBacklog?: number;
  readonly fs?: FileOps;
}

function isNotFound(err: unknown): boolean {
  return (err as NodeJS.ErrnoException | undefined)?.code === 'ENOENT';
}

/**
 * Appends one JSON object per line. Writes are serialised across sources; nothing is fsynced. A failed
 * write keeps its lines and tries them again, ahead of the new one, when the next event arrives, so a
 * full disk or a missing mount loses events only once the backlog overflows (counted).
 */
export class FileSink implements PersistSink {
  readonly name = 'file';
  private readonly opts: FileSinkOptions;
  private readonly fs: FileOps;
  private readonly metrics: SinkMetrics;
  private readonly outage: OutageLog;
  private readonly maxBytes: number;
  private readonly maxBacklog: number;
  private readonly torn: Counter<'sink'>;
  /** Bytes in the file as far as we know; undefined until learned again from the file system. */
  private size: number | undefined;
  /** Size before an append that failed, which may have left a partial line behind. */
  private tornAt: number | undefined;
  private backlog: string[] = [];
  private chain: Promise<void> = Promise.resolve();

  constructor(opts: FileSinkOptions) {
    this.opts = opts;
    this.fs = opts.fs ?? fsp;
    this.metrics = sinkMetrics(opts.registry, this.name);
    this.outage = new OutageLog(opts.logger, { sink: this.name, file: opts.path });
    this.maxBytes = opts.maxBytes ?? DEFAULT_FILE_MAX_BYTES;
    this.maxBacklog = Math.max(0, opts.maxBacklog ?? DEFAULT_FILE_BACKLOG);
    this.torn = counter(opts.registry, {
      name: 'npd_event_sink_torn_lines_total',
      help: 'Partial lines found at the end of the event file when the sink opened it, each ended with a newline',
      labelNames: ['sink'],
    });
  }

  write(event: KubeEvent): Promise<void> {
    const line = persistedLine(event, this.opts.nodeName);
    return this.serial(async () => {
      const lines = [...this.backlog, line];
      this.backlog = [];
      if (!(await this.attempt(lines, lines.length - 1))) this.keep(lines);
    });
  }

  /** Nothing waits between attempts, so there is nothing to cut short. */
  stopRetrying(): void {}

  /** Tries the backlog one last time; what still fails is given up. */
  close(): Promise<void> {
    return this.serial(async () => {
      const lines = this.backlog;
      this.backlog = [];
      if (lines.length > 0 && !(await this.attempt(lines, lines.length))) {
        this.metrics.givenUp.inc({ sink: this.name }, lines.length);
      }
    });
  }

  private serial(task: () => Promise<void>): Promise<void> {
    const next = this.chain.then(task);
    // attempt() does not throw; the catch only keeps one surprise from wedging every later write.
    this.chain = next.catch((err: unknown) =>
      this.opts.logger.error({ err, sink: this.name }, 'file sink failed'),
    );
    return this.chain;
  }

  /** `retried` of the lines were tried before: the backlog. */
  private async attempt(lines: readonly string[], retried: number): Promise<boolean> {
    if (retried > 0) this.metrics.retries.inc({ sink: this.name }, retried);
    try {
      await this.append(lines.join(''));
      this.metrics.writes.inc({ sink: this.name, result: 'success' }, lines.length);
      this.outage.succeeded();
      return true;
    } catch (err) {
      this.size = undefined;
      this.metrics.writes.inc({ sink: this.name, result: 'failure' }, lines.length);
      this.outage.failed(
        { err: (err as Error).message, pending: lines.length },
        'Unable to append events to file (will retry with the next event)',
      );
      return false;
    }
  }

  private keep(lines: readonly string[]): void {
    const over = lines.length - this.maxBacklog;
    if (over > 0) this.metrics.givenUp.inc({ sink: this.name }, over);
    this.backlog = over > 0 ? lines.slice(over) : [...lines];
  }

  private async append(data: string): Promise<void> {
    let size = this.size ?? (await this.learnSize());
    let text = data;
    if (size > 0 && size + Buffer.byteLength(text) > this.maxBytes) {
      await this.fs.rename(this.opts.path, `${this.opts.path}.1`);
      size = 0;
    } else if (this.tornAt !== undefined && size > this.tornAt) {
      // End the partial line a failed append left, so it spoils one line rather than two.
      text = `\n${text}`;
    }
    this.tornAt = size;
    await this.fs.appendFile(this.opts.path, text, { mode: FILE_MODE });
    this.tornAt = undefined;
    this.size = size + Buffer.byteLength(text);
  }

  private async learnSize(): Promise<number> {
    await this.fs.mkdir(path.dirname(this.opts.path), { recursive: true });
    let size: number;
    try {
      size = (await this.fs.stat(this.opts.path)).size;
    } catch (err) {
      if (isNotFound(err)) return 0;
      throw err;
    }
    if (size > 0 && this.tornAt === undefined && (await this.lastByte(size)) !== NEWLINE) {
      // A failed append of an earlier run (or another writer) left a partial line: end it before ours.
      this.tornAt = size - 1;
      this.torn.inc({ sink: this.name });
      this.opts.logger.warn(
        { sink: this.name, file: this.opts.path, bytes: size },
        'event file ends with a partial line; ending it before the next event',
      );
    }
    return size;
  }

  private async lastByte(size: number): Promise<number | undefined> {
    const handle = await this.fs.open(this.opts.path, 'r');
    try {
      const { buffer, bytesRead } = await handle.read(Buffer.alloc(1), 0, 1, size - 1);
      return bytesRead === 1 ? buffer[0] : undefined;
    } finally {
      await handle.close();
    }
  }
}
