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
import { closeSync, openSync, writeSync } from 'node:fs';
import { kernelCorpus } from './kernel-corpus.ts';

interface WriterConfig {
  readonly rate: number;
  readonly seconds: number;
  readonly marks: number;
  readonly marker: string;
  readonly batch?: number;
  /** Syslog level prefix; 6 (info) stays below the console loglevel, so the serial console is spared. */
  readonly level?: number;
}

export function markedLine(marker: string, index: number): string {
  return `${marker}: marker problem #${index}`;
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
    if (this.markDue()) return Buffer.from(`${this.prefix}${markedLine(this.cfg.marker, this.marks++)}\n`);
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

if (process.argv[1]?.endsWith('kmsg-writer.ts')) run(JSON.parse(process.argv[2] ?? '{}') as WriterConfig);
