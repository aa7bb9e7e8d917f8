/**
 * The parent's side of the fleet: K worker processes (worker.ts, forked with tsx), the identities dealt
 * round-robin among them, one command sent to all at once and their answers gathered.
 */
import { type ChildProcess, fork } from 'node:child_process';
import { join } from 'node:path';
import type { FleetIdentity } from './identities.ts';
import type { Command, MetricTotals, Reply, WireCondition } from './protocol.ts';

const WORKER = join(import.meta.dirname, 'worker.ts');

class Worker {
  private next = 1;
  private readonly waiting = new Map<number, { resolve: (v: unknown) => void; reject: (e: Error) => void }>();
  readonly child: ChildProcess;

  constructor() {
    this.child = fork(WORKER, [], {
      execArgv: ['--import', 'tsx'],
      stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
    });
    this.child.on('message', (r: Reply) => {
      const w = this.waiting.get(r.id);
      this.waiting.delete(r.id);
      if (r.ok) w?.resolve(r.result);
      else w?.reject(new Error(`fleet worker ${this.child.pid}: ${r.error}`));
    });
    this.child.on('exit', (code, signal) => {
      for (const w of this.waiting.values()) w.reject(new Error(`fleet worker exited (${code ?? signal})`));
      this.waiting.clear();
    });
  }

  send(command: Command): Promise<unknown> {
    const id = this.next++;
    return new Promise((resolve, reject) => {
      this.waiting.set(id, { resolve, reject });
      this.child.send({ id, command });
    });
  }
}

export interface FleetOptions {
  readonly identities: readonly FleetIdentity[];
  readonly workers: number;
  readonly heartbeatSeconds: number;
  /** Worker i logs its agents' warnings to `${logPrefix}-<i>.log`. */
  readonly logPrefix: string;
}

export class Fleet {
  private readonly workers: Worker[];
  readonly size: number;
  readonly logFiles: string[];

  private constructor(workers: Worker[], size: number, logFiles: string[]) {
    this.workers = workers;
    this.size = size;
    this.logFiles = logFiles;
  }

  static async create(opts: FleetOptions): Promise<Fleet> {
    const workers = Array.from({ length: opts.workers }, () => new Worker());
    const logFiles = workers.map((_, i) => `${opts.logPrefix}-${i}.log`);
    await Promise.all(
      workers.map((w, i) =>
        w.send({
          cmd: 'init',
          identities: opts.identities.filter((_, k) => k % opts.workers === i),
          heartbeatSeconds: opts.heartbeatSeconds,
          logFile: logFiles[i] as string,
        }),
      ),
    );
    return new Fleet(workers, opts.identities.length, logFiles);
  }

  private async all(command: Command): Promise<unknown[]> {
    return Promise.all(this.workers.map((w) => w.send(command)));
  }

  private async sum(command: Command): Promise<number> {
    return (await this.all(command)).reduce<number>((s, n) => s + Number(n), 0);
  }

  /** Every agent starts at a random moment within `jitterMs`; resolves when all have. */
  start(jitterMs: number): Promise<number> {
    return this.sum({ cmd: 'start', jitterMs });
  }

  condition(condition: WireCondition): Promise<number> {
    return this.sum({ cmd: 'condition', condition });
  }

  hung(first: boolean): Promise<number> {
    return this.sum({ cmd: 'hung', first });
  }

  /** Returns how many events were recorded over the fleet. */
  events(tag: string, count: number): Promise<number> {
    return this.sum({ cmd: 'events', tag, count });
  }

  async metrics(): Promise<MetricTotals> {
    const out: MetricTotals = {};
    for (const m of (await this.all({ cmd: 'metrics' })) as MetricTotals[])
      for (const [k, v] of Object.entries(m)) out[k] = (out[k] ?? 0) + v;
    return out;
  }

  /** Stops every agent (events flushed within graceMs), then the workers. */
  async stop(graceMs = 5000): Promise<void> {
    try {
      await this.sum({ cmd: 'stop', graceMs });
    } finally {
      for (const w of this.workers) w.child.disconnect();
    }
  }

  pids(): number[] {
    return this.workers.map((w) => w.child.pid ?? 0);
  }
}

/** The sum of every series of `name` whose labels include all of `labels`. */
export function metricSum(m: MetricTotals, name: string, labels: Record<string, string> = {}): number {
  const want = Object.entries(labels).map(([k, v]) => `${k}="${v}"`);
  let sum = 0;
  for (const [key, v] of Object.entries(m)) {
    const base = key.split('{')[0];
    if (base === name && want.every((w) => key.includes(w))) sum += v;
  }
  return sum;
}

/** What grew between two metric snapshots (the later minus the earlier, series by series). */
export function metricDelta(after: MetricTotals, before: MetricTotals): MetricTotals {
  const out: MetricTotals = {};
  for (const [k, v] of Object.entries(after)) out[k] = v - (before[k] ?? 0);
  return out;
}
