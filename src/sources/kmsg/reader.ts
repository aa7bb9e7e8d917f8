import * as nodeFs from 'node:fs';
import type { Registry } from 'prom-client';
import { backoffMs } from '../../core/backoff.ts';
import type { Clock, TimerHandle } from '../../core/clock.ts';
import type { Logger } from '../../core/logger.ts';
import { unhealthy } from '../../core/health.ts';
import type { LogLine, MonitorHealth } from '../../core/types.ts';
import { type KmsgDevice, nodeKmsgDevice } from '../../host/clib/kmsg-snapshot.ts';
import { bootTimeMs, readUptimeMs, startTime, type TextFileReader } from '../start-time.ts';
import { kmsgAccessHint, toError } from './access.ts';
import { decodeKmsgFields, type KmsgFields } from './decode.ts';
import { BUSY_POLL_MS, nextDrain, type Pace, QUIET } from './pacing.ts';
import { createMetrics, type ReaderMetrics, SKIP_REASONS, type SkipReason } from './metrics.ts';
import { kmsgTimestampMs, LEADING_SEQ, parseKmsgRecord } from './parser.ts';
import { kmsgStartPosition } from './position.ts';

export interface KmsgReaderOptions {
  readonly clock: Clock;
  readonly registry: Registry;
  readonly logger: Logger;
  /** Called once per drain with the new lines, oldest first; never with an empty array. */
  readonly onLines: (lines: LogLine[]) => void;
  /** The `source` metric label. Default `kmsg`. */
  readonly source?: string;
  readonly path?: string;
  readonly device?: KmsgDevice;
  readonly fs?: TextFileReader;
  readonly uptimePath?: string;
  /** NPD `lookback`: how far before now the start-up backlog is replayed. Default 0. */
  readonly lookbackMs?: number;
  /** NPD `delay`: records from the first `delay` after boot are skipped. Default 0. */
  readonly delayMs?: number;
  readonly pollIntervalMs?: number;
  readonly maxRecordsPerTick?: number;
  /** Drop records whose facility is not 0: only the kernel can log with facility 0. */
  readonly requireKernelFacility?: boolean;
  readonly bufferBytes?: number;
}

type Step = 'more' | 'idle' | Error;

const RETRY = { initialMs: 1000, maxMs: 30_000 } as const;
/** Records plus dictionaries stay under 8 KiB (CONSOLE_EXT_LOG_MAX); a short buffer loses the record. */
const DEFAULT_BUFFER_BYTES = 64 * 1024;

/**
 * Reads /dev/kmsg like NPD's kmsg watcher. Counts: every successful read() is one line read, and ends
 * up as exactly one of delivered, malformed or skipped{reason}; records the kernel overwrote or the
 * reader could not fit are counted as lost.
 */
export class KmsgReader {
  private readonly opts: KmsgReaderOptions;
  private readonly path: string;
  private readonly device: KmsgDevice;
  private readonly buffer: Buffer;
  private readonly metrics: ReaderMetrics;
  private fd: number | undefined;
  private timer: TimerHandle | undefined;
  private cancelWait: (() => void) | undefined;
  private running = false;
  private healthy = false;
  private failedAt: number | undefined;
  private detail = 'not started';
  private bootTime: number | undefined;
  private startAt = 0;
  /** Where in the ring reading starts (for the start-up summary), once the boot time is known. */
  startsFrom: string | undefined;
  /** Until the first EAGAIN the reader is replaying history, which the start time filters. */
  private backlogDone = false;
  private lastSeq: number | undefined;
  private pace: Pace = QUIET;
  /** A wait in poll(2) fired since the last drain. */
  private woken = false;
  private failures = 0;
  /** Counts for this drain, added to the counters once per drain rather than once per record. */
  private readCount = 0;
  private readonly skipCounts = new Map<SkipReason, number>(SKIP_REASONS.map((r) => [r, 0]));
  private readonly fields: KmsgFields = { facility: 0, seq: 0, usec: 0, message: '' };

  constructor(opts: KmsgReaderOptions) {
    this.opts = opts;
    this.path = opts.path ?? '/dev/kmsg';
    this.device = opts.device ?? nodeKmsgDevice();
    this.buffer = Buffer.alloc(opts.bufferBytes ?? DEFAULT_BUFFER_BYTES);
    this.metrics = createMetrics(opts.registry, opts.source ?? 'kmsg');
  }

  start(): void {
    if (this.running) return;
    this.running = true;
    if (this.open()) this.schedule(0);
  }

  stop(): void {
    this.running = false;
    this.schedule(undefined);
    this.closeFd();
    this.healthy = false;
    this.detail = 'stopped';
  }

  health(): MonitorHealth {
    if (this.running && this.healthy) return { up: true, healthy: true };
    return unhealthy(this.running, this.detail, this.failedAt);
  }

  private open(): boolean {
    if (this.bootTime === undefined) {
      const uptime = readUptimeMs(this.opts.fs ?? nodeFs, this.opts.uptimePath);
      if (uptime instanceof Error) return this.fail('boot time', uptime);
      const now = this.opts.clock.now();
      this.bootTime = bootTimeMs(now, uptime);
      const { lookbackMs = 0, delayMs = 0 } = this.opts;
      this.startAt = startTime(now, uptime, lookbackMs, delayMs);
      this.startsFrom = kmsgStartPosition(this.bootTime, this.startAt, lookbackMs, delayMs);
    }
    try {
      this.fd = this.device.openSync(this.path, nodeFs.constants.O_RDONLY | nodeFs.constants.O_NONBLOCK);
    } catch (err) {
      const e = toError(err);
      return this.fail(`open ${this.path}`, e, kmsgAccessHint(this.path, e));
    }
    this.healthy = true;
    this.failedAt = undefined;
    return true;
  }

  private tick(): void {
    this.timer = undefined;
    if (!this.running) return;
    if (this.fd === undefined && !this.open()) return;
    if (this.fd !== undefined) this.drain(this.fd);
  }

  private drain(fd: number): void {
    const woke = this.woken;
    this.woken = false;
    const batch: LogLine[] = [];
    let outcome: Step = 'more';
    for (let i = 0; i < (this.opts.maxRecordsPerTick ?? 10_000) && outcome === 'more'; i++) {
      outcome = this.readOne(fd, batch);
    }
    const read = this.readCount;
    this.flushCounts();
    this.deliver(batch);
    if (!this.running) return;
    if (outcome instanceof Error) {
      this.fail(`read ${this.path}`, outcome);
      return;
    }
    if (outcome === 'idle') this.backlogDone = true;
    this.failures = 0;
    const idleMs = this.opts.pollIntervalMs ?? 200;
    const drained = { capped: outcome === 'more', read, batch: batch.length, woke };
    const step = nextDrain(this.pace, drained, this.device.waitReadable !== undefined, idleMs);
    this.pace = step.pace;
    if (step.emptyWake) this.metrics.emptyWakes.inc();
    if ('wait' in step.next) this.awaitRecords(fd, idleMs);
    else this.schedule(step.next.timerMs);
  }

  /** Sleeps in poll(2) until the kernel logs, then drains a moment later (one batch a burst), or `idleMs`. */
  private awaitRecords(fd: number, idleMs: number): void {
    this.schedule(undefined);
    this.cancelWait = this.device.waitReadable?.(fd, () => {
      this.cancelWait = undefined;
      this.woken = true;
      if (this.running) this.schedule(BUSY_POLL_MS);
    });
    if (!this.cancelWait) this.schedule(idleMs);
  }

  private readOne(fd: number, batch: LogLine[]): Step {
    let length: number;
    try {
      length = this.device.readSync(fd, this.buffer);
    } catch (err) {
      return this.onReadError(err);
    }
    if (length === 0) return 'idle';
    this.readCount += 1;
    if (decodeKmsgFields(this.buffer, length, this.fields)) this.take(this.fields, batch);
    else this.accept(this.buffer.toString('utf8', 0, length), batch);
    return 'more';
  }

  private onReadError(err: unknown): Step {
    const code = (err as NodeJS.ErrnoException | undefined)?.code;
    if (code === 'EAGAIN' || code === 'EWOULDBLOCK' || code === 'EINTR') return 'idle';
    // The kernel overwrote our next record and moved us to the oldest; the seq gap says how many.
    if (code === 'EPIPE') return 'more';
    if (code === 'EINVAL') {
      // The kernel already stepped past the record that did not fit, so it is gone.
      this.metrics.lost.inc();
      if (this.lastSeq !== undefined) this.lastSeq += 1;
      this.opts.logger.warn({ bufferBytes: this.buffer.length }, 'kmsg record too big for the buffer');
      return 'more';
    }
    return toError(err);
  }

  private accept(raw: string, batch: LogLine[]): void {
    const record = parseKmsgRecord(raw);
    if (record instanceof Error) {
      this.metrics.malformed.inc();
      const seq = LEADING_SEQ.exec(raw)?.[1];
      // Account for its seq slot (guessing the next one if unreadable) so it is not also counted as lost.
      if (seq !== undefined) this.trackSeq(Number(seq));
      else if (this.lastSeq !== undefined) this.lastSeq += 1;
      this.opts.logger.debug({ err: record.message, raw: raw.slice(0, 200) }, 'malformed kmsg record');
      return;
    }
    this.take(record, batch);
  }

  private take(record: KmsgFields, batch: LogLine[]): void {
    const timestamp = kmsgTimestampMs(this.bootTime ?? 0, record.usec);
    const reason = this.skipReason(record, timestamp);
    if (reason) this.skipCounts.set(reason, (this.skipCounts.get(reason) ?? 0) + 1);
    else batch.push({ timestamp, message: record.message });
  }

  private flushCounts(): void {
    if (this.readCount > 0) this.metrics.read.inc(this.readCount);
    this.readCount = 0;
    for (const [reason, n] of this.skipCounts) {
      if (n === 0) continue;
      this.metrics.skipped(reason).inc(n);
      this.skipCounts.set(reason, 0);
    }
  }

  private skipReason(record: KmsgFields, timestamp: number): SkipReason | undefined {
    // After a reopen the device starts again at its oldest record.
    if (this.lastSeq !== undefined && record.seq <= this.lastSeq) return 'duplicate';
    this.trackSeq(record.seq);
    if (this.opts.requireKernelFacility && record.facility !== 0) return 'not_kernel';
    if (record.message === '') return 'empty';
    if (!this.backlogDone && timestamp < this.startAt) return 'before_start';
    return undefined;
  }

  private trackSeq(seq: number): void {
    if (this.lastSeq !== undefined && seq > this.lastSeq + 1) {
      const lost = seq - this.lastSeq - 1;
      this.metrics.lost.inc(lost);
      this.opts.logger.warn({ lost, lastSeq: this.lastSeq, seq }, 'kmsg records overwritten unread');
    }
    this.lastSeq = seq;
  }

  private deliver(batch: LogLine[]): void {
    if (batch.length === 0) return;
    try {
      this.opts.onLines(batch);
    } catch (err) {
      // A throwing consumer must not kill the timer loop, but the lines it did not take are lost.
      this.metrics.skipped('callback_error').inc(batch.length);
      this.opts.logger.error({ err, lines: batch.length }, 'kmsg line consumer threw');
    }
  }

  /** Always returns false, so open() can `return this.fail(...)`. A hint is logged once, as an error. */
  private fail(what: string, err: Error, hint?: string): false {
    this.closeFd();
    this.healthy = false;
    this.failedAt ??= this.opts.clock.now();
    if (hint && this.detail !== hint) this.opts.logger.error({ err: err.message }, hint);
    this.detail = hint ?? `${what}: ${err.message}`;
    this.metrics.restarts.inc();
    this.failures += 1;
    const delayMs = backoffMs(this.failures, RETRY.initialMs, RETRY.maxMs);
    this.opts.logger.warn({ err: err.message, delayMs }, `kmsg reader failed (${what}); retrying`);
    this.schedule(delayMs);
    return false;
  }

  /** The one pending wake-up (a timer or a poll), replaced; undefined just cancels it. */
  private schedule(ms: number | undefined): void {
    this.timer?.cancel();
    this.timer = undefined;
    this.cancelWait?.();
    this.cancelWait = undefined;
    if (ms !== undefined) this.timer = this.opts.clock.setTimeout(() => this.tick(), ms);
  }

  private closeFd(): void {
    // End the wait first: poll(2) holds its own reference to the file, and the wake-up byte ends it.
    this.cancelWait?.();
    this.cancelWait = undefined;
    if (this.fd === undefined) return;
    const fd = this.fd;
    this.fd = undefined;
    try {
      this.device.closeSync(fd);
    } catch (err) {
      this.opts.logger.debug({ err }, 'closing kmsg fd failed');
    }
  }
}
