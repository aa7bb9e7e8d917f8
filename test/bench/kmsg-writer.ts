/**
 * A paced writer of kernel-log lines into the real /dev/kmsg, run as its own process by the kmsg flood
 * benchmark so its CPU is not charged to the agent or the benchmark.
 *
 *   node test/bench/kmsg-writer.ts '{"rate":20000,"seconds":60,"marks":600,"marker":"npdbench1234"}'
 *
 * /dev/kmsg rate-limits each open file to a burst of 10 records per 5 s (printk_devkmsg=ratelimit) and
 * silently drops the rest, so the device is reopened after every `batch` (<= 10) lines. Routine lines
 * come from the benchmark's kernel corpus; marked lines are due at evenly spaced times and written as
 * soon as they are due, so all of them go out even when the writer cannot keep the pace. Prints one
 * JSON summary line on stdout.
 */
import { spawn } from 'node:child_process';
import { closeSync, openSync, writeSync } from 'node:fs';
import { kernelCorpus } from './kernel-corpus.ts';

export interface WriterConfig {
  readonly rate: number;
  readonly seconds: number;
  readonly marks: number;
  readonly marker: string;
  readonly batch?: number;
  /** Syslog level prefix; 6 (info) stays below the console loglevel, so the serial console is spared. */
  readonly level?: number;
  /** What a marked line looks like (default `plain`). */
  readonly shape?: MarkShape;
}

/**
 * `plain`: `<marker>: marker problem #<i>`, for a rule the benchmark adds. `oom-kill`: the OOM killer's
 * line (mm/oom_kill.c, __oom_kill_process) with the marker as the victim's comm (<= 15 characters, as
 * TASK_COMM_LEN allows) and the index in the pid, so NPD's shipped OOMKilling rule matches it unchanged
 * and every marked line is distinct.
 */
export type MarkShape = 'plain' | 'oom-kill';

export function markedLine(marker: string, index: number, shape: MarkShape = 'plain'): string {
  if (shape === 'plain') return `${marker}: marker problem #${index}`;
  const pid = 100_000 + index;
  return `Out of memory: Killed process ${pid} (${marker}) total-vm:1048576kB, anon-rss:524288kB, file-rss:2048kB, shmem-rss:0kB, UID:0 pgtables:1200kB oom_score_adj:999`;
}

class Writer {
  written = 0;
  marks = 0;
  opens = 0;
  writeErrors = 0;
  private readonly cfg: WriterConfig;
  private readonly batch: number;
  private readonly prefix: string;
  private readonly pool: Buffer[];
  private readonly totalMs: number;
  private readonly started = process.hrtime.bigint();

  constructor(cfg: WriterConfig) {
    this.cfg = cfg;
    this.batch = Math.min(cfg.batch ?? 10, 10);
    this.prefix = `<${cfg.level ?? 6}>`;
    this.pool = kernelCorpus(10_000, 0).map((l) => Buffer.from(`${this.prefix}${l}\n`));
    this.totalMs = cfg.seconds * 1000;
  }

  elapsedMs(): number {
    return Number(process.hrtime.bigint() - this.started) / 1e6;
  }

  /** Writes everything due by now; returns false once the run is over. */
  tick(): boolean {
    const now = this.elapsedMs();
    const due = Math.floor((this.cfg.rate * Math.min(now, this.totalMs)) / 1000);
    while (this.written < due || this.markDue()) {
      const fd = openSync('/dev/kmsg', 'w');
      this.opens++;
      for (let i = 0; i < this.batch && (this.written < due || this.markDue()); i++) {
        try {
          writeSync(fd, this.next());
        } catch {
          this.writeErrors++;
        }
        this.written++;
      }
      closeSync(fd);
    }
    return now < this.totalMs;
  }

  private markDue(): boolean {
    const { marks, cfg } = this;
    return marks < cfg.marks && this.elapsedMs() >= ((marks + 0.5) * this.totalMs) / cfg.marks;
  }

  private next(): Buffer {
    if (this.markDue())
      return Buffer.from(`${this.prefix}${markedLine(this.cfg.marker, this.marks++, this.cfg.shape)}\n`);
    return this.pool[this.written % this.pool.length] as Buffer;
  }
}

function run(cfg: WriterConfig): void {
  const w = new Writer(cfg);
  const loop = () => {
    if (w.tick()) {
      setTimeout(loop, 1);
      return;
    }
    const seconds = w.elapsedMs() / 1000;
    const { written, marks, opens, writeErrors } = w;
    const summary = { written, marks, opens, writeErrors, seconds, achievedRate: written / seconds };
    process.stdout.write(`${JSON.stringify(summary)}\n`);
  };
  loop();
}

export interface WriterSummary {
  readonly written: number;
  readonly marks: number;
  readonly opens: number;
  readonly writeErrors: number;
  readonly seconds: number;
  readonly achievedRate: number;
}

/** Runs this file as its own process (its CPU is not the agent's) and resolves with its summary. */
export function runWriter(cfg: Omit<WriterConfig, 'marker'>, marker: string): Promise<WriterSummary> {
  const { rate, seconds, marks, batch, level, shape } = cfg;
  const json = JSON.stringify({ rate, seconds, marks, marker, batch, level, shape });
  const child = spawn(process.execPath, [import.meta.filename, json], {
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  let out = '';
  child.stdout.on('data', (d: Buffer) => {
    out += d.toString();
  });
  return new Promise((resolve, reject) =>
    child.once('exit', (code) =>
      code === 0 ? resolve(JSON.parse(out) as WriterSummary) : reject(new Error(`writer exit ${code}`)),
    ),
  );
}

if (process.argv[1]?.endsWith('kmsg-writer.ts')) run(JSON.parse(process.argv[2] ?? '{}') as WriterConfig);
